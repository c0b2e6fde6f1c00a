package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.ReleaseResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes that reach a node while its earlier ones are in flight share a log entry (log format 2):
 * each still gets its own reply and a token of its own, and every replica applies the same.
 */
class BatchedWritesTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void concurrentWritesShareEntriesYetEachGetsItsOwnTokenOnEveryReplica() throws Exception {
    cluster = TestCluster.start(3, dir);
    LeaseholdNode leader = cluster.awaitLeader();
    String follower = cluster.followers().get(0).id();
    int n = 300;
    List<com.google.common.util.concurrent.ListenableFuture<AcquireResponse>> calls =
        new ArrayList<>();
    for (int i = 0; i < n; i++) {
      // Half through the leader, half forwarded by a follower: both batch.
      String via = i % 2 == 0 ? leader.id() : follower;
      calls.add(
          LeasesGrpc.newFutureStub(cluster.channel(via))
              .withDeadlineAfter(30, TimeUnit.SECONDS)
              .acquire(acquire("batch/" + i, "h" + i, 60)));
    }
    Map<String, Long> tokens = new TreeMap<>();
    Set<Long> entries = new HashSet<>();
    for (int i = 0; i < n; i++) {
      AcquireResponse r = calls.get(i).get(30, TimeUnit.SECONDS);
      assertEquals(Outcome.GRANTED, r.getOutcome(), "batch/" + i);
      long token = r.getLease().getToken();
      assertEquals(r.getRevision(), token >> 12, "the token's high bits are the entry's index");
      tokens.put("batch/" + i, token);
      entries.add(r.getRevision());
    }
    assertEquals(n, new HashSet<>(tokens.values()).size(), "every grant has a token of its own");
    assertTrue(
        entries.size() < n,
        "concurrent writes shared entries: " + entries.size() + " entries for " + n + " writes");

    cluster.awaitConverged();
    for (LeaseholdNode node : cluster.running()) {
      ListResponse l =
          cluster
              .leases(node.id())
              .list(ListRequest.newBuilder().setPrefix("batch/").setStale(true).build());
      Map<String, Long> there =
          l.getLeasesList().stream()
              .collect(
                  Collectors.toMap(x -> x.getName(), x -> x.getToken(), (a, b) -> a, TreeMap::new));
      assertEquals(tokens, there, "replica " + node.id() + " applied the same grants");
    }

    // Releases batch too, and each answers for its own lease.
    List<com.google.common.util.concurrent.ListenableFuture<ReleaseResponse>> releases =
        new ArrayList<>();
    tokens.forEach(
        (name, token) ->
            releases.add(
                LeasesGrpc.newFutureStub(cluster.channel(leader.id()))
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .release(ReleaseRequest.newBuilder().setName(name).setToken(token).build())));
    for (var r : releases) {
      assertEquals(Outcome.RELEASED, r.get(30, TimeUnit.SECONDS).getOutcome());
    }
  }
}
