package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A clean stop hands the leader's groups to a caught-up follower before the node goes, so its
 * clients wait for one vote instead of an election timeout; a rolling upgrade that stops the leader
 * last then costs one short pause.
 */
class LeadershipHandOverTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aLeaderHandsItsGroupOverAndACleanStopOfTheNextKeepsTheLeases() throws Exception {
    cluster = TestCluster.start(3, dir, TestCluster::steadyElections);
    LeaseholdNode leader = cluster.awaitLeader();
    long token =
        cluster.leases(leader.id()).acquire(acquire("lock/kept", "h", 60)).getLease().getToken();
    cluster.awaitConverged();

    Map<String, String> handed = leader.consensus().handOverLeadership(Duration.ofSeconds(10));

    // The old leader keeps running and heartbeating: only the transfer can have moved leadership.
    assertEquals(1, handed.size(), "the one group this node led was handed over: " + handed);
    String to = handed.values().iterator().next();
    assertNotEquals(leader.id(), to);
    TestCluster.await(
        to + " leads, " + leader.id() + " follows",
        Duration.ofSeconds(30),
        () -> cluster.leader().map(l -> l.id().equals(to)).orElse(false) && !leader.isLeader());
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(leader.id()).acquire(acquire("lock/after", "h", 60)).getOutcome(),
        "the old leader forwards to the new one");

    // Stopped as SIGTERM stops it, the new leader hands over in turn; the leases stay held.
    cluster.awaitConverged();
    cluster.stopNodeCleanly(to);
    LeaseholdNode next = cluster.awaitLeader();
    assertNotEquals(to, next.id());
    assertEquals(token, cluster.leases(next.id()).get(get("lock/kept")).getLease().getToken());
  }
}
