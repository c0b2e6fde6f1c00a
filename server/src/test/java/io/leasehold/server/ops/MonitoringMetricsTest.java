package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.release;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The series the monitoring kit (deploy/monitoring/) needs beyond the lease counters: write
 * latency, leases by namespace, watch lag, a closed division, the data disk and RocksDB memory.
 */
class MonitoringMetricsTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void writeLatencyNamespacesWatchLagDivisionDiskAndRocksDbMemoryAreExposed() throws Exception {
    cluster = TestCluster.start(1, dir, b -> b.metricsPort(0));
    LeaseholdNode node = cluster.awaitLeader();
    Map<String, Double> before = MetricsTest.scrape(node);
    double writes = MetricsTest.value(before, "leasehold_write_seconds_count");
    MetricsTest.value(before, "leasehold_write_seconds_bucket{le=\"+Inf\"}");
    assertEquals(0.0, MetricsTest.value(before, "leasehold_raft_division_closed"));
    assertEquals(0.0, MetricsTest.value(before, "leasehold_watch_lag_events"));
    double free = MetricsTest.value(before, "leasehold_data_dir_free_bytes");
    double size = MetricsTest.value(before, "leasehold_data_dir_size_bytes");
    assertTrue(free > 0 && free <= size, free + " free of " + size);
    for (String kind : new String[] {"memtables", "table_readers", "block_cache"}) {
      assertTrue(
          MetricsTest.value(before, "leasehold_rocksdb_memory_bytes{kind=\"" + kind + "\"}") >= 0,
          kind);
    }
    assertTrue(
        MetricsTest.value(before, "leasehold_rocksdb_memory_bytes{kind=\"memtables\"}") > 0,
        "an open database has a memtable");

    LeasesGrpc.LeasesBlockingStub leases = cluster.leases(node.id());
    assertEquals(Outcome.GRANTED, leases.acquire(acquire("lock/a", "runner-1", 60)).getOutcome());
    assertEquals(Outcome.GRANTED, leases.acquire(acquire("lock/b", "runner-1", 60)).getOutcome());
    var instance = leases.acquire(acquire("service/payments/i-1", "runner-2", 60));
    assertEquals(Outcome.GRANTED, instance.getOutcome());
    Map<String, Double> after = MetricsTest.scrape(node);
    assertEquals(
        writes + 3,
        MetricsTest.value(after, "leasehold_write_seconds_count"),
        "each answered write is timed");
    assertTrue(
        MetricsTest.value(after, "leasehold_write_seconds_sum")
            > MetricsTest.value(before, "leasehold_write_seconds_sum"));
    // Counted from the lease index as applied: the write's answer came after its application.
    assertEquals(
        2.0, MetricsTest.value(after, "leasehold_leases_live_by_namespace{namespace=\"lock\"}"));
    assertEquals(
        1.0, MetricsTest.value(after, "leasehold_leases_live_by_namespace{namespace=\"service\"}"));
    assertEquals(
        Outcome.RELEASED,
        leases
            .release(release("service/payments/i-1", instance.getLease().getToken()))
            .getOutcome());
    Map<String, Double> released = MetricsTest.scrape(node);
    assertEquals(
        2.0, MetricsTest.value(released, "leasehold_leases_live_by_namespace{namespace=\"lock\"}"));
    assertTrue(
        !released.containsKey("leasehold_leases_live_by_namespace{namespace=\"service\"}"),
        "an empty namespace has no series");

    var watch = LeasesGrpc.newStub(cluster.channel(node.id()));
    io.grpc.Context.CancellableContext ctx = io.grpc.Context.current().withCancellation();
    ctx.run(
        () ->
            watch.watch(
                WatchRequest.newBuilder().setPrefix("lock/").build(),
                new StreamObserver<WatchResponse>() {
                  @Override
                  public void onNext(WatchResponse value) {}

                  @Override
                  public void onError(Throwable e) {}

                  @Override
                  public void onCompleted() {}
                }));
    await(
        "the watcher is counted",
        Duration.ofSeconds(10),
        () -> MetricsTest.value(MetricsTest.scrape(node), "leasehold_watchers") == 1.0);
    assertEquals(Outcome.GRANTED, leases.acquire(acquire("lock/c", "runner-3", 60)).getOutcome());
    await(
        "the watcher reads what was applied: its lag comes back to 0",
        Duration.ofSeconds(10),
        () ->
            MetricsTest.value(MetricsTest.scrape(node), "leasehold_watch_lag_events") == 0.0
                && MetricsTest.value(MetricsTest.scrape(node), "leasehold_watch_messages_total")
                    >= 1);
    ctx.cancel(null);
  }
}
