package io.leasehold.server.ops;

import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AddMemberRequest;
import io.leasehold.proto.v1.MembershipResponse;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ratis closes the Raft division of a member that stands for election outside the configuration it
 * has (a removed member still running; a member added back that is still replaying the entry that
 * removed it). The node must say so — the {@code server} command then exits for its supervisor to
 * restart it — and a restart from its data dir must bring it back as a member.
 */
class DivisionClosedTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aMemberWhoseDivisionRatisClosedReportsItAndARestartFromItsDataBringsItBack()
      throws Exception {
    cluster = TestCluster.start(3, dir);
    LeaseholdNode leader = cluster.awaitLeader();
    String victim = cluster.followers().get(0).id();
    Map<String, Long> leases = cluster.acquireMany(leader.id(), "lock/before-", 10);
    LeaseholdNode removed = cluster.node(victim);
    assertFalse(removed.divisionClosed().isDone());

    MembershipResponse after =
        cluster
            .cluster(leader.id())
            .removeMember(RemoveMemberRequest.newBuilder().setId(victim).build());
    assertEquals(2, after.getMembersCount(), after::toString);
    // The removed member, still running, hears from no leader, stands for election and is shut
    // down by Ratis. Before, nothing outside Ratis noticed: the process ran on, answering nothing.
    String reason = removed.divisionClosed().get(30, TimeUnit.SECONDS);
    assertTrue(reason.contains("Ratis closed the Raft division of node " + victim), reason);
    assertFalse(removed.serving());

    // What a supervisor does when the server command exits with 75: start it again from its data.
    cluster.stopNode(victim);
    LeaseholdNode restarted = cluster.startNode(victim);
    leases.putAll(cluster.acquireMany(leader.id(), "lock/while-out-", 10));
    MembershipResponse back =
        cluster
            .cluster(leader.id())
            .addMember(AddMemberRequest.newBuilder().setMember(cluster.member(victim)).build());
    assertEquals(3, back.getMembersCount(), back::toString);
    cluster.awaitHeldOn(victim, leases);
    await(victim + " is SERVING", Duration.ofSeconds(30), restarted::serving);
    assertFalse(restarted.divisionClosed().isDone(), () -> restarted.divisionClosed().join());
  }
}
