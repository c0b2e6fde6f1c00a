package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.raft.RaftSettings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes beyond the node's admission bound are refused at once instead of parking server threads.
 */
class OverloadTest {
  @TempDir Path dir;

  @Test
  void writesBeyondThePendingBoundAreRefusedWithResourceExhaustedAndNoneHang() throws Exception {
    try (TestCluster cluster = TestCluster.start(1, dir, b -> b.maxPendingWrites(2))) {
      List<CompletableFuture<Object>> calls = burst(cluster, "n1", "lock/burst-", 300);
      long granted = calls.stream().filter(f -> f.join() == Outcome.GRANTED).count();
      long refused = calls.stream().filter(f -> f.join() == Status.Code.RESOURCE_EXHAUSTED).count();
      assertEquals(300, granted + refused, "every call ended GRANTED or RESOURCE_EXHAUSTED");
      assertTrue(granted >= 2, "writes within the bound go through: " + granted);
      assertTrue(refused > 0, "a burst of 300 against a bound of 2 is partly refused");
      // Once the burst is over the node accepts writes again.
      assertEquals(
          Outcome.GRANTED,
          cluster.leases("n1").acquire(acquire("lock/after", "h", 60)).getOutcome());
    }
  }

  /**
   * A leader runs each write forwarded by another node on Ratis's client pool while the caller
   * waits. Unbounded (its default), that pool grew to hundreds of threads queued on one lock
   * whenever the leader slowed; bounded, a burst queues instead. (Writes a node takes from its own
   * clients skip the pool: they go to its Raft division directly.)
   */
  @Test
  void aBurstOfForwardedWritesRunsOnABoundedRatisClientPool() throws Exception {
    try (TestCluster cluster = TestCluster.start(3, dir, b -> b)) {
      String leader = cluster.awaitLeader().id();
      String follower =
          cluster.ids().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
      List<CompletableFuture<Object>> calls = burst(cluster, follower, "lock/pool-", 1000);
      assertEquals(
          1000,
          calls.stream().filter(f -> f.join() == Outcome.GRANTED).count(),
          "every write of the burst granted");
      // The pool's threads are named <id>-client-thread<n>, numbered from 1 as they are created.
      long poolThreads =
          Thread.getAllStackTraces().keySet().stream()
              .filter(t -> t.getName().startsWith(leader + "-client-thread"))
              .count();
      assertTrue(
          poolThreads >= 1 && poolThreads <= RaftSettings.RATIS_CLIENT_THREADS,
          "the leader's Ratis client pool threads after a burst of 1000 forwarded writes: "
              + poolThreads
              + ", bound "
              + RaftSettings.RATIS_CLIENT_THREADS);
    }
  }

  /**
   * {@code n} acquires sent at once to {@code node}, each ended by its outcome or its status code.
   */
  private static List<CompletableFuture<Object>> burst(
      TestCluster cluster, String node, String prefix, int n) throws Exception {
    LeasesGrpc.LeasesStub async =
        LeasesGrpc.newStub(cluster.channel(node)).withDeadlineAfter(30, TimeUnit.SECONDS);
    List<CompletableFuture<Object>> calls = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      CompletableFuture<Object> f = new CompletableFuture<>();
      calls.add(f);
      async.acquire(
          acquire(prefix + i, "h", 60),
          new StreamObserver<>() {
            @Override
            public void onNext(AcquireResponse value) {
              f.complete(value.getOutcome());
            }

            @Override
            public void onError(Throwable t) {
              f.complete(Status.fromThrowable(t).getCode());
            }

            @Override
            public void onCompleted() {}
          });
    }
    CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    return calls;
  }
}
