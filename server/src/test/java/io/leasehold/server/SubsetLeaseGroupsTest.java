package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static io.leasehold.server.Requests.list;
import static io.leasehold.server.Requests.release;
import static io.leasehold.server.Requests.renew;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.GroupMember;
import io.leasehold.proto.v1.GroupStatus;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.MoveNamespaceRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.proto.v1.RenewResult;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.statemachine.core.LogFormat;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Lease groups on subsets of the nodes (docs/design/multi-raft.md, "Groups on subsets of the
 * nodes"): five nodes, two lease groups of three. Lease group 1 sits on n1, n2 and n3, led by n1;
 * lease group 2 on n4, n5 and n1, led by n5; the meta group, on all five, is led by n2, the first
 * node that leads no lease group. n2 and n3 are not members of group 2, n4 and n5 not of group 1:
 * each serves the other group through its members.
 */
class SubsetLeaseGroupsTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  /** Which lease groups each node hosts. */
  private static final Map<String, List<Integer>> HOSTS =
      Map.of(
          "n1", List.of(1, 2),
          "n2", List.of(1),
          "n3", List.of(1),
          "n4", List.of(2),
          "n5", List.of(2));

  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private void startFormed() throws Exception {
    cluster = TestCluster.start(5, dir, b -> b.leaseGroups(2).leaseGroupSize(3));
    await(
        () -> "each group led by the member its priority names: " + views(),
        WAIT,
        () ->
            leaders("n1").equals(Map.of(0, "n2", 1, "n1", 2, "n5"))
                && leaders("n3").equals(Map.of(0, "n2", 1, "n1"))
                && leaders("n4").equals(Map.of(0, "n2", 2, "n5")));
    await(
        "the meta group applies log format 6 on every member",
        WAIT,
        () ->
            cluster.running().stream()
                .allMatch(n -> n.consensus().logFormat() >= LogFormat.GROUPS));
  }

  @Test
  void eachLeaseGroupSitsOnItsThreePeersAndEveryNodeServesEveryNamespace() throws Exception {
    startFormed();
    for (String id : cluster.ids()) {
      assertEquals(
          HOSTS.get(id),
          List.copyOf(cluster.node(id).consensus().leaseGroupCores().keySet()),
          id + " hosts only the lease groups it formed with");
    }
    StatusResponse n1 = status("n1");
    Map<Integer, List<String>> members =
        n1.getGroupsList().stream()
            .collect(
                Collectors.toMap(
                    GroupStatus::getNumber,
                    g -> g.getMembersList().stream().map(GroupMember::getId).sorted().toList()));
    assertEquals(
        Map.of(
            0, List.of("n1", "n2", "n3", "n4", "n5"),
            1, List.of("n1", "n2", "n3"),
            2, List.of("n1", "n4", "n5")),
        members,
        "the meta group on every node, each lease group on three");

    // Each node learns, on its own, who leads the group it is not a member of.
    await(
        () -> "n3 and n4 know the leaders of the groups they are not members of: " + views(),
        WAIT,
        () ->
            status("n3").getReachedGroupsList().stream().anyMatch(r -> r.getLeaderId().equals("n5"))
                && status("n4").getReachedGroupsList().stream()
                    .anyMatch(r -> r.getLeaderId().equals("n1")));
    // First writes through n3 and n4, one after another, place namespaces on the group with the
    // fewest, lowest number first, whichever node places them: each group gets two, and for each
    // namespace one of n3 and n4 is not a member of its group.
    List<String> namespaces = List.of("alpha", "beta", "gamma", "delta");
    Map<String, Long> tokens = new java.util.HashMap<>();
    for (int i = 0; i < namespaces.size(); i++) {
      String via = i % 2 == 0 ? "n3" : "n4";
      String name = namespaces.get(i) + "/first";
      AcquireResponse r = acquireRetrying(via, acquire(name, "runner-" + i, 30));
      assertEquals(Outcome.GRANTED, r.getOutcome(), name);
      tokens.put(name, r.getLease().getToken());
    }
    assertEquals(
        Map.of("alpha", 1, "beta", 2, "gamma", 1, "delta", 2),
        namespaces.stream()
            .collect(Collectors.toMap(ns -> ns, ns -> placement("n1", ns).getGroup())),
        "placed evenly, through nodes that host one group each");

    for (String ns : namespaces) {
      int group = placement("n1", ns).getGroup();
      // Through the node that is not a member of the namespace's group.
      String remote = group == 1 ? "n4" : group == 2 ? "n3" : "n1";
      String first = ns + "/first";
      GetResponse seen = cluster.leases(remote).get(get(first));
      assertTrue(seen.getFound(), first + " read through " + remote);
      assertEquals(tokens.get(first), seen.getLease().getToken(), first);

      String second = ns + "/second";
      AcquireResponse granted = acquireRetrying(remote, acquire(second, "remote-runner", 30));
      assertEquals(Outcome.GRANTED, granted.getOutcome(), second + " through " + remote);
      assertTrue(
          granted.getLease().getToken() > tokens.get(first),
          "tokens of one namespace increase through any node");
      RenewResult renewed =
          cluster.leases(remote).renew(renew(second, granted.getLease().getToken())).getResults(0);
      assertEquals(Outcome.RENEWED, renewed.getOutcome(), second + " renewed through " + remote);
      assertEquals(
          Outcome.CONFLICT,
          cluster.leases(remote).acquire(acquire(second, "another", 30)).getOutcome(),
          "one holder at a time, through any node");
      assertEquals(
          Outcome.RELEASED,
          cluster
              .leases(remote)
              .release(release(second, granted.getLease().getToken()))
              .getOutcome());
      assertFalse(
          cluster.leases(remote).get(get(second)).getFound(),
          "a linearizable read through " + remote + " sees the release it made");
      // A write through a member, read at once through the node that is not one.
      String member = group == 1 ? "n1" : "n4";
      AcquireResponse third = acquireRetrying(member, acquire(ns + "/third", "member-runner", 30));
      assertEquals(
          third.getLease().getToken(),
          cluster.leases(remote).get(get(ns + "/third")).getLease().getToken(),
          "a read through " + remote + " sees the write acknowledged by " + member);
    }

    // n3 reports the group it serves through its members, for clients to route by.
    io.leasehold.proto.v1.GroupRoute route = status("n3").getReachedGroups(0);
    assertEquals(2, route.getNumber());
    assertEquals("n5", route.getLeaderId());
    assertEquals(List.of("n1", "n4", "n5"), route.getMemberIdsList());
    assertEquals(
        namespaces.stream().filter(ns -> placement("n3", ns).getGroup() == 2).sorted().toList(),
        route.getNamespacesList().stream().sorted().toList());

    // A list across namespaces through a node that hosts only one lease group sees both.
    ListResponse all = cluster.leases("n3").list(list(""));
    Set<String> names =
        all.getLeasesList().stream()
            .map(io.leasehold.proto.v1.Lease::getName)
            .collect(Collectors.toSet());
    for (String ns : namespaces) {
      assertTrue(names.contains(ns + "/first"), ns + "/first listed through n3: " + names);
      assertTrue(names.contains(ns + "/third"), ns + "/third listed through n3: " + names);
    }
  }

  @Test
  void aMoveDrivenByANodeThatIsNotAMemberOfOneOfItsGroupsKeepsTokensIncreasing() throws Exception {
    startFormed();
    AcquireResponse before = acquireRetrying("n1", acquire("alpha/held", "runner-1", 60));
    assertEquals(Outcome.GRANTED, before.getOutcome());
    int from = placement("n1", "alpha").getGroup();
    int to = from == 1 ? 2 : 1;
    // The meta group's leader, n2, drives the move: it is not a member of group 2, so it freezes
    // and drops the namespace there, or stages and adopts it there, through group 2's members.
    String via = "n4";
    io.leasehold.proto.v1.MoveNamespaceResponse moved =
        cluster
            .cluster(via)
            .withDeadlineAfter(WAIT.toSeconds(), TimeUnit.SECONDS)
            .moveNamespace(
                MoveNamespaceRequest.newBuilder().setNamespace("alpha").setToGroup(to).build());
    assertEquals(to, moved.getGroup(), "alpha moved to group " + to);
    await(
        "every node places alpha on group " + to,
        WAIT,
        () ->
            cluster.running().stream()
                .allMatch(
                    n ->
                        n.stateMachine()
                            .core()
                            .placement("alpha")
                            .map(p -> p.getGroup() == to && p.getMove() == 0)
                            .orElse(false)));
    for (String id : cluster.ids()) {
      GetResponse held = cluster.leases(id).get(get("alpha/held"));
      assertEquals(
          before.getLease().getToken(),
          held.getLease().getToken(),
          "the held lease moved, via " + id);
    }
    AcquireResponse after = acquireRetrying(via, acquire("alpha/after", "runner-2", 30));
    assertTrue(
        after.getLease().getToken() > before.getLease().getToken(),
        "the destination grants above every token the namespace had: "
            + after.getLease().getToken()
            + " after "
            + before.getLease().getToken());
  }

  @Test
  void aWatchGoesToAMemberAndAMemberOfALeaseGroupIsNotRemoved() throws Exception {
    startFormed();
    AcquireResponse a = acquireRetrying("n1", acquire("alpha/a", "runner-1", 30));
    assertEquals(Outcome.GRANTED, a.getOutcome());
    int group = placement("n1", "alpha").getGroup();
    String outsider = group == 1 ? "n4" : "n3";
    String member = group == 1 ? "n3" : "n4";

    // A node that is not a member of the group ends the watch, so that the client goes elsewhere;
    // so does one that hosts only some of the groups, for a watch across namespaces.
    for (String prefix : List.of("alpha/", "")) {
      StatusRuntimeException refused =
          refusedWatch(outsider, WatchRequest.newBuilder().setPrefix(prefix).build());
      assertEquals(Status.Code.UNAVAILABLE, refused.getStatus().getCode(), refused.toString());
      assertTrue(
          refused.getStatus().getDescription().contains("not a member"),
          refused.getStatus().getDescription());
      // Where to go instead: the group's members' client addresses.
      String trailer =
          refused
              .getTrailers()
              .get(
                  io.grpc.Metadata.Key.of(
                      "leasehold-group-members", io.grpc.Metadata.ASCII_STRING_MARSHALLER));
      assertTrue(trailer != null && trailer.startsWith(group + "="), String.valueOf(trailer));
      assertEquals(
          cluster.running().stream()
              .filter(n -> n.consensus().leaseGroupCores().containsKey(group))
              .map(LeaseholdNode::clientAddress)
              .collect(java.util.stream.Collectors.toSet()),
          java.util.Set.of(trailer.substring(trailer.indexOf('=') + 1).split(",")),
          trailer);
    }

    // A watch of some groups only, for a client merging one stream per group: the outsider serves
    // the meta group and its own lease group, not alpha's.
    int own = group == 1 ? 2 : 1;
    Iterator<WatchResponse> some =
        cluster
            .leases(outsider)
            .withDeadlineAfter(WAIT.toSeconds(), TimeUnit.SECONDS)
            .watch(WatchRequest.newBuilder().setPrefix("").addGroups(own).addGroups(0).build());
    java.util.Set<Integer> seen = new java.util.TreeSet<>();
    while (seen.size() < 2) {
      WatchResponse m = some.next();
      seen.add(m.getGroup());
      assertEquals(
          java.util.Set.of(0, own),
          io.leasehold.proto.v1.ResumeToken.parseFrom(m.getResumeToken()).getThroughMap().keySet(),
          "the token holds the groups followed");
    }
    assertEquals(java.util.Set.of(0, own), seen);
    Map<WatchRequest, Status.Code> refusals =
        Map.of(
            WatchRequest.newBuilder().setPrefix("").addGroups(group).build(),
            Status.Code.UNAVAILABLE,
            WatchRequest.newBuilder().setPrefix("").addGroups(9).build(),
            Status.Code.INVALID_ARGUMENT,
            WatchRequest.newBuilder().setPrefix("").addGroups(own).addGroups(own).build(),
            Status.Code.INVALID_ARGUMENT,
            WatchRequest.newBuilder().setPrefix("beta/").addGroups(own).build(),
            Status.Code.INVALID_ARGUMENT);
    for (Map.Entry<WatchRequest, Status.Code> r : refusals.entrySet()) {
      StatusRuntimeException refused = refusedWatch(outsider, r.getKey());
      assertEquals(r.getValue(), refused.getStatus().getCode(), refused.toString());
      if (r.getValue() == Status.Code.INVALID_ARGUMENT) {
        assertTrue(
            refused.getStatus().getDescription().startsWith("groups: "),
            refused.getStatus().getDescription());
      }
    }

    // Through a member, the watch follows the group: from just after alpha/a's grant, so that it
    // sees the next one whenever its stream opens.
    Iterator<WatchResponse> watch =
        cluster
            .leases(member)
            .withDeadlineAfter(WAIT.toSeconds(), TimeUnit.SECONDS)
            .watch(
                WatchRequest.newBuilder()
                    .setPrefix("alpha/")
                    .setStartRevision(a.getRevision() + 1)
                    .build());
    AcquireResponse b = acquireRetrying(outsider, acquire("alpha/b", "runner-2", 30));
    Optional<io.leasehold.proto.v1.Event> granted = Optional.empty();
    while (granted.isEmpty() && watch.hasNext()) {
      granted =
          watch.next().getEventsList().stream()
              .filter(e -> e.getName().equals("alpha/b"))
              .findFirst();
    }
    assertEquals(b.getLease().getToken(), granted.orElseThrow().getLease().getToken());

    StatusRuntimeException kept =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .cluster("n1")
                    .removeMember(RemoveMemberRequest.newBuilder().setId("n3").build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, kept.getStatus().getCode(), kept.toString());
    assertTrue(
        kept.getStatus().getDescription().contains("lease groups [1]"),
        kept.getStatus().getDescription());
  }

  /** How node {@code id} ends a watch it refuses. */
  private StatusRuntimeException refusedWatch(String id, WatchRequest request) {
    return assertThrows(
        StatusRuntimeException.class,
        () ->
            cluster
                .leases(id)
                .withDeadlineAfter(WAIT.toSeconds(), TimeUnit.SECONDS)
                .watch(request)
                .hasNext());
  }

  private AcquireResponse acquireRetrying(
      String node, io.leasehold.proto.v1.AcquireRequest request) {
    return cluster.acquireRetrying(node, request, WAIT);
  }

  /** {@code ns}'s placement on node {@code id}, once every node has applied it. */
  private PlacementResponse placement(String id, String ns) {
    await(
        "every node applied the placement of " + ns,
        WAIT,
        () ->
            cluster.running().stream()
                .allMatch(n -> n.stateMachine().core().placement(ns).isPresent()));
    return cluster.node(id).stateMachine().core().placement(ns).orElseThrow();
  }

  private StatusResponse status(String id) {
    return cluster.cluster(id).status(StatusRequest.getDefaultInstance());
  }

  /** Group number to the leader node {@code id} reports for each group it hosts that has one. */
  private Map<Integer, String> leaders(String id) {
    return status(id).getGroupsList().stream()
        .filter(g -> !g.getLeaderId().isEmpty())
        .collect(Collectors.toMap(GroupStatus::getNumber, GroupStatus::getLeaderId));
  }

  private String views() {
    StringBuilder b = new StringBuilder();
    for (String id : cluster.ids()) {
      String view;
      try {
        view = leaders(id).toString();
      } catch (RuntimeException e) {
        view = "down";
      }
      b.append(id).append('=').append(view).append(' ');
    }
    return b.toString().trim();
  }
}
