package io.leasehold.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeStatsTest {
  @Test
  void readsThePrometheusTextFormatSummingLabelledSeries() {
    Map<String, Double> m =
        NodeStats.parse(
            """
        # HELP process_cpu_seconds_total CPU
        # TYPE process_cpu_seconds_total counter
        process_cpu_seconds_total 12.5
        leasehold_raft_role{role="leader"} 1.0
        leasehold_raft_role{role="follower"} 0.0
        leasehold_leases_renewed_total 1.0E4
        bad_line
        """);
    assertEquals(12.5, m.get("process_cpu_seconds_total"));
    assertEquals(1.0, m.get("leasehold_raft_role"));
    assertEquals(10_000.0, m.get("leasehold_leases_renewed_total"));
  }

  @Test
  void theDefaultMetricsEndpointIsTheClientPortPlusTwo() {
    assertEquals(
        List.of("127.0.0.1:7402", "10.0.0.1:7412"),
        NodeStats.defaultMetricsAddresses(List.of("127.0.0.1:7400", "10.0.0.1:7410")));
  }

  @Test
  void aDeltaGivesCoresOverTheIntervalAndCounterGrowth() {
    NodeStats.Sample a =
        new NodeStats.Sample("n", 0, Map.of(NodeStats.CPU, 10.0, NodeStats.RENEWED, 100.0));
    NodeStats.Sample b =
        new NodeStats.Sample(
            "n",
            2_000_000_000L,
            Map.of(
                NodeStats.CPU, 11.0, NodeStats.RENEWED, 700.0, NodeStats.RSS, 256.0 * 1024 * 1024));
    NodeStats.Delta d = NodeStats.between(List.of(a), List.of(b)).get(0);
    assertEquals(0.5, d.cores().orElseThrow(), 1e-9);
    assertEquals(256.0, d.rssMiB().orElseThrow(), 1e-9);
    assertEquals(600.0, d.counters().get(NodeStats.RENEWED));
  }

  @Test
  void anUnreachableNodeIsUnknownNotAFailure() {
    NodeStats.Sample a = new NodeStats.Sample("n", 0, Map.of());
    NodeStats.Sample b = new NodeStats.Sample("n", 1_000_000_000L, Map.of());
    NodeStats.Delta d = NodeStats.between(List.of(a), List.of(b)).get(0);
    assertTrue(d.cores().isEmpty());
    assertTrue(new NodeStats(List.of("127.0.0.1:1")).sample().get(0).values().isEmpty());
  }
}
