package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code leasehold bench …} against a real three-node cluster (in this JVM), short runs. */
class BenchCommandsTest {
  @TempDir static Path dir;
  static TestCluster cluster;
  static String metrics;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.metricsPort(0));
    metrics =
        String.join(
            ",",
            cluster.running().stream()
                .map(n -> "127.0.0.1:" + n.metricsPort().orElseThrow())
                .toList());
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  static JsonObject bench(String... args) {
    List<String> all = new java.util.ArrayList<>(List.of("bench"));
    all.addAll(List.of(args));
    all.addAll(List.of("--metrics", metrics, "-o", "json"));
    return run(cluster, all.toArray(String[]::new)).ok().object();
  }

  static double num(JsonObject o, String... path) {
    JsonElement e = o;
    for (String p : path) {
      e = e.getAsJsonObject().get(p);
    }
    return e.getAsDouble();
  }

  @Test
  void acquireReleaseReportsCyclesLatenciesAndEachNodesCpu() {
    JsonObject r = bench("acquire-release", "--clients", "4", "--duration", "2s", "--warmup", "1s");
    assertEquals("acquire-release", r.get("workload").getAsString());
    assertEquals("leasehold", r.get("system").getAsString());
    assertEquals(
        List.of("workload", "system", "settings", "results", "nodes", "notes"),
        List.copyOf(r.keySet()),
        "the JSON shape is stable");
    assertTrue(num(r, "results", "cycles_per_s") > 0, r.toString());
    assertEquals(0, num(r, "results", "failed"), r.toString());
    assertEquals(num(r, "results", "cycles_per_s") * 2, num(r, "results", "writes_per_s"), 1e-6);
    assertTrue(num(r, "results", "acquire", "count") > 0);
    assertTrue(num(r, "results", "acquire", "p99_ms") >= num(r, "results", "acquire", "p50_ms"));
    assertEquals(3, r.getAsJsonArray("nodes").size());
    for (JsonElement n : r.getAsJsonArray("nodes")) {
      assertTrue(
          n.getAsJsonObject().get("cores").getAsDouble() >= 0,
          "each node's CPU from its metrics: " + n);
      assertTrue(n.getAsJsonObject().get("rss_mib").getAsDouble() > 0, n.toString());
    }
  }

  @Test
  void anOpenLoopRunKeepsToItsRate() {
    JsonObject r =
        bench(
            "acquire-release",
            "--clients",
            "8",
            "--rate",
            "40",
            "--duration",
            "3s",
            "--warmup",
            "1s");
    double rate = num(r, "results", "cycles_per_s");
    // An open loop never runs ahead of its rate. That it keeps up with it is a benchmark figure
    // (about 40 on an idle machine, -Dbench.rates=true): a busy machine ran 17 a second.
    assertTrue(rate > 0 && rate < 45, "at most 40 cycles a second: " + rate);
    if (Boolean.getBoolean("bench.rates")) {
      assertTrue(rate > 25, "about 40 cycles a second: " + rate);
    }
    assertTrue(r.getAsJsonArray("notes").toString().contains("open loop"), r.toString());
  }

  @Test
  void renewKeepsEveryLeaseAliveAndCountsTheRenewalsTheClusterApplied() {
    JsonObject r =
        bench(
            "renew",
            "--clients",
            "2",
            "--leases",
            "200",
            "--ttl",
            "3s",
            "--duration",
            "4s",
            "--warmup",
            "0s");
    assertEquals(0, num(r, "results", "false_expiries"), r.toString());
    // 200 leases renewed about every second (a third of the TTL) for 4 s.
    assertTrue(num(r, "results", "renewals_per_s") > 100, r.toString());
    assertEquals(0, num(r, "results", "expired_on_server"), r.toString());
  }

  @Test
  void renewWithBatchAcquiresThroughAcquireAllIntoTheSessions() {
    // 1,200 names a client: more than one AcquireMany call each.
    JsonObject r =
        bench(
            "renew",
            "--clients",
            "2",
            "--leases",
            "2400",
            "--ttl",
            "3s",
            "--sessions",
            "--batch",
            "--duration",
            "3s",
            "--warmup",
            "0s");
    assertEquals(0, num(r, "results", "false_expiries"), r.toString());
    assertEquals(0, num(r, "results", "expired_on_server"), r.toString());
    assertTrue(num(r, "results", "acquired_per_s") > 0, r.toString());
    assertTrue(
        r.getAsJsonObject("settings").get("keep_alive").getAsString().contains("acquireAll"),
        r.toString());
  }

  @Test
  void contendedLockHandsTheLockOverWithoutAFencingOrExclusionViolation() {
    JsonObject r =
        bench(
            "contended-lock",
            "--clients",
            "4",
            "--names",
            "1",
            "--duration",
            "3s",
            "--warmup",
            "0s");
    assertTrue(num(r, "results", "acquisitions_per_s") > 0, r.toString());
    assertEquals(0, num(r, "results", "fencing_violations"));
    assertEquals(0, num(r, "results", "exclusion_violations"));
    assertEquals(0, num(r, "results", "failed"), r.toString());
  }

  @Test
  void watchDeliversEveryEventOnTheLeaderAndOnAFollower() {
    JsonObject r = bench("watch", "--rate", "50", "--duration", "3s", "--warmup", "1s");
    assertTrue(num(r, "results", "writes") > 100, r.toString());
    assertEquals(0, num(r, "results", "leader_events_missing"), r.toString());
    assertEquals(0, num(r, "results", "follower_events_missing"), r.toString());
    assertEquals(num(r, "results", "writes"), num(r, "results", "follower_events_seen"));
    assertTrue(num(r, "results", "follower_send_to_watch", "count") > 0);
  }

  @Test
  void badSettingsAreUsageErrorsNamingTheOption() {
    run(cluster, "bench", "acquire-release", "--clients", "0")
        .failed(LeaseholdCommand.EXIT_USAGE, "--clients: must be at least 1");
    run(cluster, "bench", "acquire-release", "--namespaces", "0")
        .failed(LeaseholdCommand.EXIT_USAGE, "--namespaces: must be at least 1");
    run(cluster, "bench", "acquire-release", "--rate", "-3")
        .failed(LeaseholdCommand.EXIT_USAGE, "--rate: must be positive");
    run(cluster, "bench", "renew", "--leases", "0")
        .failed(LeaseholdCommand.EXIT_USAGE, "--leases: must be at least 1");
    run(cluster, "bench", "watch", "--metrics", "nowhere")
        .failed(LeaseholdCommand.EXIT_USAGE, "--metrics: 'nowhere' is not host:port");
    run(cluster, "bench", "failover", "--kills", "0")
        .failed(LeaseholdCommand.EXIT_USAGE, "--kills: must be at least 1");
  }

  static LeaseholdNode any() {
    return cluster.running().get(0);
  }
}
