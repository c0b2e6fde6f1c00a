package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A leader that cannot reach a majority must not answer linearizable reads: the others may have
 * elected a new leader and changed everything. Ratis 3.3 answered such a read at once when nothing
 * had committed since its last confirmed read (the fault tests caught a Get missing a lease just
 * renewed elsewhere); a read now waits for a barrier entry to commit ({@code ReadBarrier}).
 */
class IsolatedLeaderReadTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aLeaderWithoutAMajorityRefusesLinearizableReadsButServesStaleOnes() throws Exception {
    // Long elections, so that the old leader is still leader (it has heard from no one to say
    // otherwise) while the read is tried.
    cluster =
        TestCluster.start(
            3,
            dir,
            b ->
                b.electionTimeout(Duration.ofMillis(1500), Duration.ofMillis(1900))
                    .requestTimeout(Duration.ofSeconds(2)));
    LeaseholdNode leader = cluster.awaitLeader();
    String id = leader.id();
    assertEquals(
        Outcome.GRANTED, cluster.leases(id).acquire(acquire("lock/a", "h", 60)).getOutcome());
    cluster.awaitConverged();
    List<String> followers = cluster.followers().stream().map(LeaseholdNode::id).toList();
    cluster.stopNode(followers.get(0));
    // Two of three still run: a confirmed read at the current commit index, which Ratis then
    // remembers as acknowledged.
    assertTrue(cluster.leases(id).get(get("lock/a")).getFound());
    cluster.stopNode(followers.get(1));
    // The old leader has not yet noticed (Ratis steps down after an election timeout without
    // answers); had it, the read below would be refused anyway.
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> cluster.leases(id).get(get("lock/a")));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
    // A read that asks for stale data still gets what this node has.
    assertTrue(cluster.leases(id).get(io.leasehold.server.Requests.staleGet("lock/a")).getFound());
  }

  @Test
  void aFollowerWhoseLeaderHasNoMajorityGetsNoLinearizableRead() throws Exception {
    // Five nodes: the leader and one follower can be left together without a majority, the way
    // a partition can cut a deposed leader off with a follower that still follows it.
    cluster =
        TestCluster.start(
            5,
            dir,
            b ->
                b.electionTimeout(Duration.ofMillis(1500), Duration.ofMillis(1900))
                    .requestTimeout(Duration.ofSeconds(2)));
    LeaseholdNode leader = cluster.awaitLeader();
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(leader.id()).acquire(acquire("lock/b", "h", 60)).getOutcome());
    cluster.awaitConverged();
    String follower = cluster.followers().get(0).id();
    List<String> others =
        cluster.followers().stream()
            .map(LeaseholdNode::id)
            .filter(f -> !f.equals(follower))
            .toList();
    cluster.stopNode(others.get(0));
    cluster.stopNode(others.get(1));
    // Three of five still run: a confirmed read at the current commit index, which Ratis then
    // remembers as acknowledged.
    assertTrue(
        cluster.leases(follower).get(get("lock/b")).getFound(),
        "a follower's read with a majority");
    cluster.stopNode(others.get(2));
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class, () -> cluster.leases(follower).get(get("lock/b")));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
    assertTrue(
        cluster.leases(follower).get(io.leasehold.server.Requests.staleGet("lock/b")).getFound());

    // Then the leader goes too: the follower's confirmation finds no one to ask.
    String leaderId = leader.id();
    cluster.stopNode(leaderId);
    assertThrows(StatusRuntimeException.class, () -> cluster.leases(follower).get(get("lock/b")));

    // With a majority back, the follower's reads work again: a failure must not leave the
    // confirmation path broken (Ratis's ordered client, once used here, stayed closed after
    // a request that found no leader).
    for (String other : others) {
      cluster.startNode(other);
    }
    cluster.startNode(leaderId);
    TestCluster.await(
        "a follower's linearizable read works again",
        Duration.ofSeconds(60),
        () -> {
          try {
            return cluster.leases(follower).get(get("lock/b")).getFound();
          } catch (StatusRuntimeException notYet) {
            return false;
          }
        });
  }
}
