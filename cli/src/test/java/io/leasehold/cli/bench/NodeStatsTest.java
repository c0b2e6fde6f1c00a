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
    assertEquals(1.0, m.get(NodeStats.LEADER), "a labelled series is kept on its own too");
    assertEquals(0.0, m.get("leasehold_raft_role{role=\"follower\"}"));
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
  void perWriteCostsComeFromTheLeaderAndTheFollowers() {
    // 1,000 acquisitions and 1,000 releases in 10 s: the leader used 0.2 cores, the followers 0.1
    // and 0.3; they received 400,000 and 600,000 bytes of appends; 500 flushes on the leader, 400
    // and 600 on the followers.
    List<NodeStats.Sample> before =
        List.of(
            sample("n1", 0, 10, false, 0, 0, 0, 0, 100),
            sample("n2", 0, 20, true, 0, 0, 0, 0, 100),
            sample("n3", 0, 30, false, 0, 0, 0, 0, 100));
    List<NodeStats.Sample> after =
        List.of(
            sample("n1", 10, 11, false, 1000, 1000, 400_000, 400, 900),
            sample("n2", 10, 22, true, 1000, 1000, 0, 500, 900),
            sample("n3", 10, 33, false, 1000, 1000, 600_000, 600, 900));
    List<NodeStats.Delta> deltas = NodeStats.between(before, after);
    assertTrue(deltas.get(1).leader());
    Map<String, Object> w = NodeStats.perWrite(deltas).orElseThrow();
    assertEquals(2000L, w.get("writes"));
    assertEquals(800L, w.get("entries"));
    assertEquals(1000.0, w.get("leader_cpu_us"));
    assertEquals(1000.0, w.get("follower_cpu_us"));
    assertEquals(500.0, w.get("replicated_bytes"));
    assertEquals(0.25, w.get("leader_fsyncs"));
    assertEquals(0.25, w.get("follower_fsyncs"));
  }

  @Test
  void perWriteIsUnknownWithoutALeaderOrItsMetrics() {
    List<NodeStats.Sample> before = List.of(sample("n1", 0, 1, false, 0, 0, 0, 0, 1));
    List<NodeStats.Sample> after = List.of(sample("n1", 1, 2, false, 10, 10, 0, 5, 20));
    assertTrue(NodeStats.perWrite(NodeStats.between(before, after)).isEmpty());
    List<NodeStats.Sample> older =
        List.of(new NodeStats.Sample("n1", 0, Map.of(NodeStats.LEADER, 1.0)));
    List<NodeStats.Sample> olderAfter =
        List.of(new NodeStats.Sample("n1", 1_000_000_000L, Map.of(NodeStats.LEADER, 1.0)));
    assertTrue(
        NodeStats.perWrite(NodeStats.between(older, olderAfter)).isEmpty(),
        "a server without these metrics");
  }

  private static NodeStats.Sample sample(
      String node,
      long seconds,
      double cpu,
      boolean leader,
      double acquired,
      double released,
      double appendBytes,
      double flushes,
      double commit) {
    return new NodeStats.Sample(
        node,
        seconds * 1_000_000_000L,
        Map.of(
            NodeStats.CPU, cpu,
            NodeStats.LEADER, leader ? 1.0 : 0.0,
            NodeStats.ACQUIRED, acquired,
            NodeStats.RELEASED, released,
            NodeStats.APPEND_BYTES, appendBytes,
            NodeStats.LOG_FLUSHES, flushes,
            NodeStats.COMMIT, commit));
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
