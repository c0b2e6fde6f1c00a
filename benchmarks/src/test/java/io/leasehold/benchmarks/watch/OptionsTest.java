package io.leasehold.benchmarks.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.NodeConfig;
import io.leasehold.server.watch.WatchHub;
import java.nio.file.Path;
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
    assertEquals(
        Duration.ofSeconds(5),
        Options.parse(new String[] {"latency", "--snapshot-at", "5", "--duration", "20"})
            .snapshotAt);
  }

  @Test
  void aSnapshotOutsideThePeriodIsRefusedWithAWayOut() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> Options.parse(new String[] {"latency", "--duration=20"}));
    assertEquals(
        "--snapshot-at must fall inside the recorded period (--duration 20 s), got 50 s; give a smaller one, or none",
        e.getMessage());
  }

  @Test
  void aValueThatIsNoNumberIsRefusedNamingTheOption() {
    IllegalArgumentException seconds =
        assertThrows(
            IllegalArgumentException.class,
            () -> Options.parse(new String[] {"latency", "--snapshot-at=soon"}));
    assertEquals("--snapshot-at must be a number of seconds, got 'soon'", seconds.getMessage());
    IllegalArgumentException count =
        assertThrows(
            IllegalArgumentException.class,
            () -> Options.parse(new String[] {"fanout", "--watchers=many"}));
    assertEquals("--watchers must be a number, got 'many'", count.getMessage());
    IllegalArgumentException negative =
        assertThrows(
            IllegalArgumentException.class,
            () -> Options.parse(new String[] {"latency", "--duration=-1"}));
    assertEquals("--duration must be positive seconds, got -1", negative.getMessage());
  }

  @Test
  void theNodesRunInThisJvmUnlessALatencyRunAsksForAProcessEach() {
    assertFalse(Options.parse(new String[] {"latency"}).nodesApart);
    assertFalse(Options.parse(new String[] {"latency", "--nodes=jvm"}).nodesApart);
    assertTrue(Options.parse(new String[] {"latency", "--nodes", "process"}).nodesApart);
    IllegalArgumentException mode =
        assertThrows(
            IllegalArgumentException.class, () -> Options.parse(new String[] {"--nodes=process"}));
    assertEquals(
        "--nodes=process: only for the latency run (mode latency), got mode all",
        mode.getMessage());
    IllegalArgumentException value =
        assertThrows(
            IllegalArgumentException.class,
            () -> Options.parse(new String[] {"latency", "--nodes=container"}));
    assertEquals("--nodes: must be jvm or process, got 'container'", value.getMessage());
  }

  @Test
  void watchTuningReachesTheNodesConfigurationAndAChildNodesArguments() {
    NodeTuning tuning =
        Options.parse(
                new String[] {"fanout", "--watch-message-rate=2500", "--watch-max-delay-ms=400"})
            .tuning();
    // As a child node JVM gets it: through its arguments.
    NodeTuning child =
        NodeTuning.parse(tuning.args().get(0), tuning.args().get(1), tuning.args().get(2));
    NodeConfig c = configWith(child);
    assertEquals(2500, c.watchMessageRate());
    assertEquals(Duration.ofMillis(400), c.watchMaxDelay());
    assertEquals(WatchHub.DEFAULT_MAX_DELAY, configWith(NodeTuning.DEFAULTS).watchMaxDelay());
    assertTrue(
        Options.parse(new String[] {"fanout", "--watch-max-delay-ms=400"})
            .describe()
            .contains("watch-max-delay=400ms"));
  }

  private static NodeConfig configWith(NodeTuning tuning) {
    NodeConfig.Builder b = NodeConfig.standalone().dataDir(Path.of("d"));
    tuning.applyTo(b);
    return b.build();
  }
}
