package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.MembershipResponse;
import io.leasehold.proto.v1.MoveNamespaceRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.proto.v1.SetGroupMembersRequest;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.server.raft.RaftConsensus;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.core.LogFormat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lease group's members changed where lease groups sit on subsets of the nodes
 * (docs/design/multi-raft.md, "Groups on subsets of the nodes"; {@code Cluster/SetGroupMembers}).
 * Five nodes, two lease groups of three: group 1 on n1, n2 and n3; group 2 on n4, n5 and n1.
 */
class SubsetGroupMembersTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aFailedMemberIsReplacedAndALiveOneMovedOutWhileEveryLeaseKeepsItsToken() throws Exception {
    cluster = TestCluster.start(5, dir, b -> b.leaseGroups(2).leaseGroupSize(3));
    await(
        "the meta group applies log format 6 on every member, and group 1 has a leader",
        WAIT,
        () ->
            cluster.running().stream().allMatch(n -> n.consensus().logFormat() >= LogFormat.GROUPS)
                && hosts("n1", 1)
                && cluster.node("n1").consensus().groups().stream()
                    .anyMatch(g -> g.number() == 1 && g.leaderId().isPresent()));
    // "jobs" lives in group 1.
    cluster.acquireRetrying("n2", acquire("jobs/first", "runner", 120), WAIT);
    cluster
        .cluster("n2")
        .moveNamespace(
            MoveNamespaceRequest.newBuilder().setNamespace("jobs").setToGroup(1).build());
    Map<String, Long> tokens = cluster.acquireMany("n2", "jobs/", 10);
    long highest = tokens.values().stream().mapToLong(Long::longValue).max().orElseThrow();

    // n3 fails for good; n5, which is not a member of group 1, puts n4 in its place.
    cluster.stopNode("n3");
    MembershipResponse replaced = setMembers("n5", 1, List.of("n4"), List.of("n3"));
    assertEquals(List.of("n1", "n2", "n4"), ids(replaced), replaced.toString());
    await("n4 hosts group 1 with every lease", WAIT, () -> holdsEvery("n4", tokens));
    // n3 comes back: it recovers its replica of group 1 with the members it had, and no member
    // talks to it. Its replica knows no leader, so it asks the group's leader, and drops it.
    cluster.startNode("n3");
    await(
        "n3 drops the replica of a group it was removed from while down",
        WAIT,
        () -> !hosts("n3", 1));
    GetResponse viaN3 = cluster.leases("n3").get(get("jobs/0"));
    assertEquals(tokens.get("jobs/0"), viaN3.getLease().getToken(), viaN3.toString());
    cluster.stopNode("n3");
    // n3 is in no lease group now, so it leaves the cluster as any node does.
    MembershipResponse cluster3 =
        cluster.cluster("n1").removeMember(RemoveMemberRequest.newBuilder().setId("n3").build());
    assertFalse(ids(cluster3).contains("n3"), cluster3.toString());

    // n2, a live member (and the meta group's leader), is moved out in favour of n5, through n2.
    MembershipResponse moved = setMembers("n2", 1, List.of("n5"), List.of("n2"));
    assertEquals(List.of("n1", "n4", "n5"), ids(moved), moved.toString());
    await(
        "n2 no longer hosts group 1, and its state of the group is gone",
        WAIT,
        () -> !hosts("n2", 1) && !Files.exists(groupState("n2", 1)));
    await("n5 hosts group 1 with every lease", WAIT, () -> holdsEvery("n5", tokens));

    // Every node serves the namespace, through the members where it is not one, with each token.
    for (String via : List.of("n1", "n2", "n4", "n5")) {
      for (Map.Entry<String, Long> e : tokens.entrySet()) {
        GetResponse r = cluster.leases(via).get(get(e.getKey()));
        assertTrue(r.getFound(), via + " " + e.getKey());
        assertEquals(e.getValue(), r.getLease().getToken(), via + " " + e.getKey());
      }
    }
    // Writes go on in the changed group, and tokens keep rising.
    AcquireResponse next = cluster.acquireRetrying("n2", acquire("jobs/next", "runner", 120), WAIT);
    assertEquals(Outcome.GRANTED, next.getOutcome());
    assertTrue(next.getLease().getToken() > highest, next.toString());
    // The node that asked (n2) learns the group's new members, and reports them to clients.
    await(
        "n2 reports group 1's new members",
        WAIT,
        () ->
            cluster
                .cluster("n2")
                .status(StatusRequest.getDefaultInstance())
                .getReachedGroupsList()
                .stream()
                .anyMatch(
                    r ->
                        r.getNumber() == 1
                            && r.getMemberIdsList().stream()
                                .sorted()
                                .toList()
                                .equals(List.of("n1", "n4", "n5"))));

    // Restarted, n2 does not bring its replica of group 1 back as the cluster formed it (an empty
    // voter of a configuration that is gone): it serves the group through its members.
    cluster.stopNode("n2");
    cluster.startNode("n2");
    GetResponse after =
        TestCluster.eventually(
            "n2 serves jobs/next again",
            WAIT,
            () -> {
              try {
                return Optional.of(cluster.leases("n2").get(get("jobs/next")));
              } catch (StatusRuntimeException e) {
                return Optional.empty();
              }
            });
    assertEquals(next.getLease().getToken(), after.getLease().getToken());
    assertFalse(hosts("n2", 1), "n2 hosts no replica of group 1 after its restart");

    // n2 is put back in place of n5: a new replica, brought up to date from the leader.
    assertEquals(List.of("n1", "n2", "n4"), ids(setMembers("n5", 1, List.of("n2"), List.of("n5"))));
    await("n2 hosts group 1 again with every lease", WAIT, () -> holdsEvery("n2", tokens));
    await("n5 no longer hosts group 1", WAIT, () -> !hosts("n5", 1));

    // With neither list, the call lists the group's members.
    assertEquals(List.of("n1", "n2", "n4"), ids(setMembers("n4", 1, List.of(), List.of())));
    // The group's leader, n1, is moved out and back: its leadership is moved away first (Ratis
    // closes a removed leader's replica on its own, and keeps it), so n1 can host the group again.
    await(
        "n1 leads group 1",
        WAIT,
        () ->
            cluster.node("n1").consensus().groups().stream()
                .anyMatch(g -> g.number() == 1 && g.leaderId().equals(Optional.of("n1"))));
    assertEquals(List.of("n2", "n4", "n5"), ids(setMembers("n4", 1, List.of("n5"), List.of("n1"))));
    await("n1 no longer hosts group 1", WAIT, () -> !hosts("n1", 1));
    assertEquals(List.of("n1", "n2", "n4"), ids(setMembers("n4", 1, List.of("n1"), List.of("n5"))));
    await("n1 hosts group 1 again with every lease", WAIT, () -> holdsEvery("n1", tokens));

    // Repeating a finished change changes nothing.
    assertEquals(List.of("n1", "n2", "n4"), ids(setMembers("n1", 1, List.of("n2"), List.of("n5"))));
  }

  @Test
  void badRequestsAreRefusedNamingTheField() throws Exception {
    cluster = TestCluster.start(5, dir, b -> b.leaseGroups(2).leaseGroupSize(3));
    await(
        "every node up",
        WAIT,
        () -> cluster.running().stream().allMatch(n -> n.consensus().leaderId().isPresent()));
    assertRefused(0, List.of(), List.of(), "group");
    assertRefused(3, List.of(), List.of(), "group");
    assertRefused(1, List.of("n9"), List.of(), "add[0]");
    assertRefused(1, List.of(""), List.of(), "add[0]");
    assertRefused(1, List.of("n4"), List.of("n4"), "remove[0]");
    // n3 loses its data and comes back empty: still a member of group 1, with no replica of it.
    // Given an empty one, it would vote without the entries it acknowledged: refused.
    cluster.wipeAndStartJoining("n3");
    assertRefused(1, List.of("n3"), List.of(), "add");
    assertEquals(List.of("n1", "n2", "n3"), ids(setMembers("n4", 1, List.of(), List.of())));
  }

  private void assertRefused(int group, List<String> add, List<String> remove, String field) {
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> setMembers("n4", group, add, remove));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e.toString());
    assertTrue(e.getStatus().getDescription().startsWith(field + ":"), e.toString());
  }

  private MembershipResponse setMembers(
      String via, int group, List<String> add, List<String> remove) {
    return cluster
        .cluster(via)
        .withDeadlineAfter(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)
        .setGroupMembers(
            SetGroupMembersRequest.newBuilder()
                .setGroup(group)
                .addAllAdd(add)
                .addAllRemove(remove)
                .build());
  }

  private static List<String> ids(MembershipResponse r) {
    return r.getMembersList().stream().map(Member::getId).sorted().toList();
  }

  private boolean hosts(String id, int group) {
    return cluster.node(id).consensus().leaseGroupCores().containsKey(group);
  }

  /** Whether node {@code id}'s own replica of group 1 holds each lease with its token. */
  private boolean holdsEvery(String id, Map<String, Long> tokens) {
    Optional<LeaseCore> core =
        Optional.ofNullable(cluster.node(id).consensus().leaseGroupCores().get(1));
    if (core.isEmpty()) {
      return false;
    }
    long now = System.currentTimeMillis() * 1000;
    return tokens.entrySet().stream()
        .allMatch(
            e -> {
              GetResponse r = core.get().get(get(e.getKey()), now);
              return r.getFound() && r.getLease().getToken() == e.getValue();
            });
  }

  private Path groupState(String id, int group) {
    return cluster
        .configFor(id)
        .dataDir()
        .resolve("groups")
        .resolve(
            RaftConsensus.leaseGroupUuid(cluster.configFor(id).clusterName(), group).toString());
  }
}
