package io.leasehold.server.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.server.TestCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class HeldResendsTest {
  @Test
  void aWakeRunsAHeldResendAtOnceAndOnlyOnce() {
    HeldResends held = new HeldResends(Runnable::run);
    List<Boolean> runs = new CopyOnWriteArrayList<>();
    held.pause(Duration.ofHours(1).toMillis(), runs::add);
    assertEquals(1, held.size());

    held.wakeAll();
    assertEquals(List.of(true), runs, "woken, not after its hour");
    assertEquals(0, held.size());
    held.wakeAll();
    assertEquals(List.of(true), runs, "a second wake finds nothing held");
  }

  @Test
  void aResendWhoseAttemptWasOutDuringAWakeRunsAtOnce() {
    HeldResends held = new HeldResends(Runnable::run);
    List<Boolean> runs = new CopyOnWriteArrayList<>();
    long seen = held.wakes();
    // The attempt is out (nothing held) when the node learns of the new leader...
    held.wakeAll();
    // ...and fails against the old one afterwards: it must not wait out its pause.
    held.pause(Duration.ofHours(1).toMillis(), seen, runs::add);
    assertEquals(List.of(true), runs, "run at once, as if woken");
    assertEquals(0, held.size());

    held.pause(Duration.ofHours(1).toMillis(), held.wakes(), runs::add);
    assertEquals(1, held.size(), "an attempt sent after the wake waits for the next one");
    held.wakeAll();
    assertEquals(List.of(true, true), runs);
  }

  @Test
  void aResendWhosePauseEndedIsNotRunAgainByAWake() {
    HeldResends held = new HeldResends(Runnable::run);
    List<Boolean> runs = new CopyOnWriteArrayList<>();
    held.pause(1, runs::add);
    TestCluster.await("the pause ends", Duration.ofSeconds(10), () -> runs.size() == 1);
    assertEquals(List.of(false), runs);
    assertEquals(0, held.size());

    held.wakeAll();
    assertEquals(List.of(false), runs);
  }
}
