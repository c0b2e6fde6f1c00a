package io.leasehold.server.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.store.InMemoryStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** How the hub spreads its message budget over its watchers, and where the max delay caps it. */
class CoalescingTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  @Test
  void aFewWatchersAreNotDelayedAtAll() {
    assertEquals(
        0, WatchHub.coalesceNanos(1, 10_000, 100 * MS), "0.1 ms of budget: under the 1 ms floor");
    assertEquals(0, WatchHub.coalesceNanos(9, 10_000, 100 * MS));
    assertEquals(0, WatchHub.coalesceNanos(2, 2_500, 400 * MS), "0.8 ms");
  }

  @Test
  void eachWatcherGetsItsShareOfTheBudgetUpToTheMaxDelay() {
    assertEquals(10 * MS, WatchHub.coalesceNanos(100, 10_000, 100 * MS));
    assertEquals(100 * MS, WatchHub.coalesceNanos(1_000, 10_000, 100 * MS));
    assertEquals(100 * MS, WatchHub.coalesceNanos(5_000, 10_000, 100 * MS), "capped");
    assertEquals(40 * MS, WatchHub.coalesceNanos(100, 2_500, 400 * MS));
    assertEquals(400 * MS, WatchHub.coalesceNanos(1_000, 2_500, 400 * MS));
    assertEquals(
        100 * MS, WatchHub.coalesceNanos(1_000, 2_500, 100 * MS), "the cap, not the budget");
  }

  @Test
  void aMaxDelayUnderOneMillisecondIsRefused() {
    LeaseCore core = new LeaseCore(new InMemoryStore());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new WatchHub(
                        () -> core, 100, Duration.ofSeconds(1), 10_000, Duration.ofMillis(0), 1)
                    .close());
    assertEquals("watch max delay: must be at least 1ms, got PT0S", e.getMessage());
  }
}
