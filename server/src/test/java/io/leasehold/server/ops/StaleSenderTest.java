package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.proto.v1.AddMemberRequest;
import io.leasehold.proto.v1.MembershipResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Peer;
import io.leasehold.server.TestCluster;
import io.leasehold.server.raft.Members;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A leader left with a log appender for a peer outside its configuration (Ratis 3.3 reached this in
 * a soak, after a member was removed and added back) refuses to add that peer: "Found duplicated
 * element", after registering the request as pending, which Ratis never clears, so every later
 * membership change on that leader fails too. AddMember must get past it.
 */
class StaleSenderTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Puts the leader in the soak's state: an appender for {@code peer}, which is not a member. */
  static void addStaleSender(RaftServer.Division leader, Peer peer) throws Exception {
    Method getRole = leader.getClass().getDeclaredMethod("getRole");
    getRole.setAccessible(true);
    Object role = getRole.invoke(leader);
    Method getLeaderState = role.getClass().getDeclaredMethod("getLeaderStateNonNull");
    getLeaderState.setAccessible(true);
    Object leaderState = getLeaderState.invoke(role);
    Method add = leaderState.getClass().getDeclaredMethod("addAndStartSenders", Collection.class);
    add.setAccessible(true);
    add.invoke(
        leaderState,
        List.of(Members.raftPeer(peer.id(), peer.peerAddress(), peer.clientAddress())));
  }

  @Test
  void addMemberGetsPastALeaderWithAStaleAppenderForTheNewMember() throws Exception {
    cluster = TestCluster.start(3, dir);
    LeaseholdNode leader = cluster.awaitLeader();
    String victim = cluster.followers().get(0).id();
    assertEquals(
        2,
        cluster
            .cluster(leader.id())
            .removeMember(RemoveMemberRequest.newBuilder().setId(victim).build())
            .getMembersCount());
    long token =
        cluster
            .leases(leader.id())
            .acquire(acquire("lock/while-out", "runner", 120))
            .getLease()
            .getToken();
    cluster.wipeAndStartJoining(victim);
    addStaleSender(leader.ratis().division(), cluster.peer(victim));

    MembershipResponse back =
        cluster
            .cluster(leader.id())
            .withDeadlineAfter(90, java.util.concurrent.TimeUnit.SECONDS)
            .addMember(AddMemberRequest.newBuilder().setMember(cluster.member(victim)).build());
    assertEquals(3, back.getMembersCount(), back::toString);
    cluster.awaitHeldOn(victim, java.util.Map.of("lock/while-out", token));
    // And membership changes work again afterwards.
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(victim).acquire(acquire("lock/after", "runner", 60)).getOutcome());
  }
}
