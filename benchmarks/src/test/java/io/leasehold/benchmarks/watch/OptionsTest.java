package io.leasehold.benchmarks.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The latency run's period, snapshot and node options, and how bad values are refused. */
class OptionsTest {
  @Test
  void theDefaultPeriodIsOneSnapshotIntervalWithTheSnapshotInTheMiddle() {
    Options o = Options.parse(new String[] {"latency"});
    assertEquals(Duration.ofSeconds(100), o.duration);
    assertEquals(Duration.ofSeconds(50), o.snapshotAt);
    assertEquals(Duration.ofSeconds(10), LatencyBenchmark.PRE_SNAPSHOT);
  }

  @Test
  void noneAsksForNoSnapshotInThePeriod() {
    Options o = Options.parse(new String[] {"latency", "--snapshot-at=none", "--duration=20"});
    assertNull(o.snapshotAt);
    assertEquals(Duration.ofSeconds(20), o.duration);
    assertEquals(Duration.ofSeconds(5), Options.parse(new String[] {"latency", "--snapshot-at", "5", "--duration", "20"}).snapshotAt);
  }

  @Test
  void aSnapshotOutsideThePeriodIsRefusedWithAWayOut() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Options.parse(new String[] {"latency", "--duration=20"}));
    assertEquals("--snapshot-at must fall inside the recorded period (--duration 20 s), got 50 s; give a smaller one, or none",
        e.getMessage());
  }

  @Test
  void aValueThatIsNoNumberIsRefusedNamingTheOption() {
    IllegalArgumentException seconds = assertThrows(IllegalArgumentException.class,
        () -> Options.parse(new String[] {"latency", "--snapshot-at=soon"}));
    assertEquals("--snapshot-at must be a number of seconds, got 'soon'", seconds.getMessage());
    IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
        () -> Options.parse(new String[] {"fanout", "--watchers=many"}));
    assertEquals("--watchers must be a number, got 'many'", count.getMessage());
    IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
        () -> Options.parse(new String[] {"latency", "--duration=-1"}));
    assertEquals("--duration must be positive seconds, got -1", negative.getMessage());
  }

  @Test
  void theNodesRunInThisJvmUnlessALatencyRunAsksForAProcessEach() {
    assertFalse(Options.parse(new String[] {"latency"}).nodesApart);
    assertFalse(Options.parse(new String[] {"latency", "--nodes=jvm"}).nodesApart);
    assertTrue(Options.parse(new String[] {"latency", "--nodes", "process"}).nodesApart);
    IllegalArgumentException mode = assertThrows(IllegalArgumentException.class,
        () -> Options.parse(new String[] {"--nodes=process"}));
    assertEquals("--nodes=process: only for the latency run (mode latency), got mode all", mode.getMessage());
    IllegalArgumentException value = assertThrows(IllegalArgumentException.class,
        () -> Options.parse(new String[] {"latency", "--nodes=container"}));
    assertEquals("--nodes: must be jvm or process, got 'container'", value.getMessage());
  }
}
