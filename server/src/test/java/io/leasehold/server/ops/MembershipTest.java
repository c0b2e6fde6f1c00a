package io.leasehold.server.ops;

import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AddMemberRequest;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.MembershipResponse;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import io.leasehold.proto.v1.TakeSnapshotRequest;
import io.leasehold.proto.v1.TakeSnapshotResponse;
import io.leasehold.proto.v1.TransferLeadershipRequest;
import io.leasehold.proto.v1.TransferLeadershipResponse;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster/AddMember, RemoveMember, TransferLeadership and TakeSnapshot on real nodes in one JVM.
 */
class MembershipTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void addedNodeCatchesUpByLogTakesLeadershipAndARemovedNodeLeavesTheConfiguration()
      throws Exception {
    cluster = TestCluster.start(3, dir);
    String follower = cluster.followers().get(0).id();
    Map<String, Long> before = cluster.acquireMany(follower, "lock/before-", 20);

    LeaseholdNode n4 = cluster.startJoiningNode("n4");
    assertFalse(n4.serving(), "a joining node is not a member and serves nothing yet");
    MembershipResponse added =
        cluster
            .cluster(follower)
            .addMember(AddMemberRequest.newBuilder().setMember(cluster.member("n4")).build());
    assertEquals(4, added.getMembersCount(), added::toString);
    Member m4 =
        added.getMembersList().stream()
            .filter(m -> m.getId().equals("n4"))
            .findFirst()
            .orElseThrow();
    assertEquals(
        cluster.peer("n4").clientAddress(),
        m4.getClientAddress(),
        "the new member's API address travels with the configuration");
    cluster.awaitHeldOn("n4", before);
    await("n4 is SERVING", Duration.ofSeconds(30), n4::serving);

    // Adding it again changes nothing.
    assertEquals(
        4,
        cluster
            .cluster("n1")
            .addMember(AddMemberRequest.newBuilder().setMember(cluster.member("n4")).build())
            .getMembersCount());

    TransferLeadershipResponse moved =
        cluster
            .cluster(follower)
            .transferLeadership(TransferLeadershipRequest.newBuilder().setId("n4").build());
    assertEquals("n4", moved.getLeaderId());
    assertEquals(cluster.peer("n4").clientAddress(), moved.getLeaderClientAddress());
    await(
        "n4 leads, ready",
        Duration.ofSeconds(30),
        () -> n4.isLeader() && n4.diagnostics().ticker().scheduler().isActive());
    StatusResponse status = cluster.cluster("n1").status(StatusRequest.getDefaultInstance());
    assertEquals("n4", status.getLeaderId());
    assertEquals(
        cluster.peer("n4").clientAddress(),
        status.getLeaderClientAddress(),
        "redirect hints name the added leader");
    Map<String, Long> after = cluster.acquireMany("n1", "lock/after-", 5);
    after
        .values()
        .forEach(
            t ->
                assertTrue(
                    t > before.values().stream().mapToLong(Long::longValue).max().orElseThrow()));

    MembershipResponse removed =
        cluster.cluster("n4").removeMember(RemoveMemberRequest.newBuilder().setId("n1").build());
    assertEquals(3, removed.getMembersCount(), removed::toString);
    assertTrue(removed.getMembersList().stream().noneMatch(m -> m.getId().equals("n1")));
    cluster.stopNode("n1");
    // Removing it again changes nothing; three members remain, and two of them are a majority.
    assertEquals(
        3,
        cluster
            .cluster("n4")
            .removeMember(RemoveMemberRequest.newBuilder().setId("n1").build())
            .getMembersCount());
    String other =
        cluster.running().stream()
            .map(LeaseholdNode::id)
            .filter(id -> !id.equals("n4"))
            .findFirst()
            .orElseThrow();
    cluster.stopNode(other);
    Map<String, Long> withTwo = cluster.acquireMany("n4", "lock/two-of-three-", 3);
    assertEquals(3, withTwo.size());
    for (LeaseholdNode n : cluster.running()) {
      cluster.awaitHeldOn(n.id(), before);
    }
  }

  @Test
  void addedNodeCatchesUpFromASnapshotWhenTheLogIsPurged() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.logSegmentSizeBytes(16 << 10).logPurgeGap(1));
    LeaseholdNode leader = cluster.awaitLeader();
    Map<String, Long> before = cluster.acquireMany(leader.id(), "partition/", 300);
    long appliedBefore = leader.ratis().division().getInfo().getLastAppliedIndex();
    TakeSnapshotResponse snap =
        cluster.cluster(leader.id()).takeSnapshot(TakeSnapshotRequest.getDefaultInstance());
    assertEquals(leader.id(), snap.getId());
    assertTrue(snap.getIndex() >= appliedBefore, "the snapshot holds every grant: " + snap);
    assertTrue(snap.getSizeBytes() > 0);
    await(
        "the leader purged its log",
        Duration.ofSeconds(20),
        () -> leader.ratis().division().getRaftLog().getStartIndex() > 1);

    LeaseholdNode n4 = cluster.startJoiningNode("n4");
    cluster
        .cluster(leader.id())
        .addMember(AddMemberRequest.newBuilder().setMember(cluster.member("n4")).build());
    await(
        "n4 installed a snapshot",
        Duration.ofSeconds(30),
        () -> n4.stateMachine().snapshotsLoaded() >= 1);
    cluster.awaitHeldOn("n4", before);
    assertEquals(
        Role.FOLLOWER, cluster.cluster("n4").status(StatusRequest.getDefaultInstance()).getRole());
  }

  @Test
  void aTransferThatRunsOutOfTimeIsUnavailableAndSaysSo() throws Exception {
    cluster = TestCluster.start(3, dir);
    LeaseholdNode leader = cluster.awaitLeader();
    String target = cluster.followers().get(0).id();
    cluster.stopNode(target);
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .cluster(leader.id())
                    .transferLeadership(
                        TransferLeadershipRequest.newBuilder()
                            .setId(target)
                            .setTimeout(com.google.protobuf.Duration.newBuilder().setSeconds(1))
                            .build()));
    // Retryable, as etcd answers a leader transfer that took too long; not INTERNAL, a server
    // fault.
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
    assertTrue(
        e.getStatus().getDescription().startsWith("leadership was not transferred; retry: "),
        e.getStatus().getDescription());
    assertEquals(leader.id(), cluster.awaitLeader().id(), "the leader stays");
  }

  @Test
  void badMembershipRequestsAreInvalidArgumentsAndChangeNothing() throws Exception {
    cluster = TestCluster.start(3, dir);
    String any = cluster.ids().get(0);
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .cluster(any)
                    .addMember(
                        AddMemberRequest.newBuilder()
                            .setMember(
                                Member.newBuilder()
                                    .setId("n9")
                                    .setPeerAddress("nowhere")
                                    .setClientAddress("127.0.0.1:1"))
                            .build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().startsWith("member.peer_address"),
        e.getStatus().getDescription());
    e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .cluster(any)
                    .addMember(
                        AddMemberRequest.newBuilder()
                            .setMember(
                                Member.newBuilder()
                                    .setId("n1")
                                    .setPeerAddress("127.0.0.1:1")
                                    .setClientAddress("127.0.0.1:2"))
                            .build()));
    assertEquals(
        Status.Code.INVALID_ARGUMENT,
        e.getStatus().getCode(),
        "an id already used at another address");
    // An id no node can have, at an address that is free: refused at once, not added and waited
    // for.
    e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .cluster(any)
                    .addMember(
                        AddMemberRequest.newBuilder()
                            .setMember(
                                Member.newBuilder()
                                    .setId("n9=x")
                                    .setPeerAddress("127.0.0.1:1")
                                    .setClientAddress("127.0.0.1:2"))
                            .build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().startsWith("member.id"), e.getStatus().getDescription());
    e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .cluster(any)
                    .transferLeadership(
                        TransferLeadershipRequest.newBuilder().setId("n9").build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    // An id far longer than a client takes in its headers: still INVALID_ARGUMENT, not a broken
    // stream (INTERNAL).
    e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .cluster(any)
                    .transferLeadership(
                        TransferLeadershipRequest.newBuilder().setId("n".repeat(40_000)).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e.toString());
    assertTrue(e.getStatus().getDescription().startsWith("id: "), e.getStatus().getDescription());
    assertEquals(
        3, cluster.cluster(any).status(StatusRequest.getDefaultInstance()).getMembersCount());
  }
}
