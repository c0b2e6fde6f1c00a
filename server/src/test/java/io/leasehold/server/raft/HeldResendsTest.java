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
