package io.leasehold.client;

import static io.leasehold.client.Fixtures.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import io.leasehold.server.raft.Consensus;
import io.leasehold.statemachine.core.LogFormat;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where lease groups sit on subsets of the nodes, a client whose first endpoint is not a member of
 * a namespace's group still sends that namespace's writes to the group's leader and opens its
 * watches on a member, from the groups the node it asked reaches through their members.
 */
class SubsetRoutingTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;
  TestCluster cluster;
  LeaseholdClient client;

  /** Where each call of a method went (the channel's authority), by method name. */
  final Map<String, List<String>> sentTo = new ConcurrentHashMap<>();

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void writesGoToTheGroupsLeaderAndWatchesToAMember() throws Exception {
    // Lease group 1 on n1, n2, n3; lease group 2 on n4, n5, n1.
    cluster = TestCluster.start(5, dir, b -> b.leaseGroups(2).leaseGroupSize(3));
    awaitFormed();
    cluster.acquireRetrying(
        "n4", io.leasehold.server.Requests.acquire("beta/first", "runner", 60), WAIT);
    await(
        "every node applied beta's placement",
        WAIT,
        () ->
            cluster.running().stream()
                .allMatch(n -> n.stateMachine().core().placement("beta").isPresent()));
    int group = cluster.node("n1").stateMachine().core().placement("beta").orElseThrow().getGroup();
    Set<String> members =
        cluster.running().stream()
            .filter(n -> n.consensus().leaseGroupCores().containsKey(group))
            .map(LeaseholdNode::clientAddress)
            .collect(Collectors.toSet());
    // The client's home node is not a member of beta's group.
    String outsider = group == 1 ? "n4" : "n2";
    assertFalse(members.contains(cluster.node(outsider).clientAddress()));
    client =
        Fixtures.client(Fixtures.endpoints(cluster, outsider), b -> b.interceptor(new Targets()));

    String leader = leaderAddress(group);
    await(
        () -> "beta's writes reach its group's leader " + leader + ": " + sentTo,
        WAIT,
        () -> {
          acquireAndRelease("beta/routed");
          List<String> acquires = sentTo.getOrDefault("Acquire", List.of());
          return leader.equals(acquires.get(acquires.size() - 1));
        });

    // A watch from now sees what is written once its stream is open, which the call does not wait
    // for: a grant and a release each round until one reaches it.
    List<WatchEvent> events = new CopyOnWriteArrayList<>();
    try (Watch watch = client.watch("beta/", 0, events::add)) {
      await(
          () -> "the watch sees a grant of beta/watched: " + events + " (" + watch + ")",
          WAIT,
          () -> {
            acquireAndRelease("beta/watched");
            return events.stream().anyMatch(e -> e.name().equals("beta/watched"));
          });
    }
    List<String> watches = sentTo.getOrDefault("Watch", List.of());
    assertEquals(
        List.of(),
        watches.stream().filter(a -> !members.contains(a)).toList(),
        "every watch opened on a member of beta's group " + members + ": " + watches);
    assertTrue(!watches.isEmpty(), "a watch was opened");
  }

  @Test
  void aWatchAcrossNamespacesMergesAStreamPerGroupWhereNoNodeHostsEveryGroup() throws Exception {
    // Lease group 1 on n1, n2, n3; 2 on n4, n5, n1; 3 on n2, n3, n4: no node is a member of all.
    cluster = TestCluster.start(5, dir, b -> b.leaseGroups(3).leaseGroupSize(3));
    awaitFormed();
    // alpha in lease group 1, beta in lease group 3, which the client's home node n1 is not in.
    Map<String, Integer> home = Map.of("alpha", 1, "beta", 3);
    for (Map.Entry<String, Integer> ns : home.entrySet()) {
      cluster.acquireRetrying(
          "n1", io.leasehold.server.Requests.acquire(ns.getKey() + "/first", "runner", 60), WAIT);
      await(
          "every node applied the placement of " + ns.getKey(),
          WAIT,
          () ->
              cluster.running().stream()
                  .allMatch(n -> n.stateMachine().core().placement(ns.getKey()).isPresent()));
      if (cluster.node("n1").stateMachine().core().placement(ns.getKey()).orElseThrow().getGroup()
          != ns.getValue()) {
        cluster
            .cluster("n1")
            .moveNamespace(
                io.leasehold.proto.v1.MoveNamespaceRequest.newBuilder()
                    .setNamespace(ns.getKey())
                    .setToGroup(ns.getValue())
                    .build());
      }
    }
    client = Fixtures.client(Fixtures.endpoints(cluster, "n1"), b -> b.interceptor(new Targets()));
    Set<String> groupThree =
        Set.of(
            cluster.node("n2").clientAddress(),
            cluster.node("n3").clientAddress(),
            cluster.node("n4").clientAddress());

    List<WatchEvent> events = new CopyOnWriteArrayList<>();
    try (Watch watch = client.watch("", 0, events::add)) {
      // A watch from now sees what is written once its streams are open: a grant and a release in
      // each namespace, each round, until both reach it.
      await(
          () -> "the watch sees alpha/w and beta/w: " + events + " (" + watch + ")",
          WAIT,
          () -> {
            acquireAndRelease("alpha/w");
            acquireAndRelease("beta/w");
            return seen(events, "alpha/w") && seen(events, "beta/w");
          });
      List<String> order = sentTo.get("Watch");
      assertTrue(
          order.contains(cluster.node("n1").clientAddress())
              && order.stream().anyMatch(groupThree::contains),
          "a stream on n1 and one on a member of group 3: " + order);
      assertEquals(Set.of(1), groupsOf(events, "alpha/w"), "alpha's events of its group");
      assertEquals(Set.of(3), groupsOf(events, "beta/w"), "beta's events of its group");

      // The node that serves group 3's stream stops: the watch resumes there on another member,
      // missing nothing of either group and repeating nothing.
      String served = order.stream().filter(groupThree::contains).reduce((a, b) -> b).orElseThrow();
      String stopped =
          cluster.running().stream()
              .filter(n -> n.clientAddress().equals(served))
              .findFirst()
              .orElseThrow()
              .id();
      int before = order.size();
      cluster.stopNode(stopped);
      await(
          () -> "the watch resumes and sees alpha/after and beta/after: " + events,
          WAIT,
          () -> {
            acquireAndRelease("alpha/after");
            acquireAndRelease("beta/after");
            return seen(events, "alpha/after") && seen(events, "beta/after");
          });
      assertTrue(
          sentTo.get("Watch").subList(before, sentTo.get("Watch").size()).stream()
              .anyMatch(a -> groupThree.contains(a) && !a.equals(served)),
          "group 3's stream resumed on another member: " + sentTo.get("Watch"));
      Map<String, Long> counts =
          events.stream()
              .collect(
                  Collectors.groupingBy(
                      e -> e.group() + " " + e.revision() + " " + e.type() + " " + e.name(),
                      Collectors.counting()));
      assertEquals(
          Map.of(),
          counts.entrySet().stream()
              .filter(c -> c.getValue() > 1)
              .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)),
          "no event delivered twice");
    }
  }

  /** Every node at log format 6, each group it hosts led. */
  private void awaitFormed() {
    await(
        "every hosted group led, log format 6 on every node",
        WAIT,
        () ->
            cluster.running().stream()
                .allMatch(
                    n ->
                        n.consensus().logFormat() >= LogFormat.GROUPS
                            && n.consensus().groups().stream()
                                .allMatch(g -> g.leaderId().isPresent())));
  }

  private static boolean seen(List<WatchEvent> events, String name) {
    return events.stream().anyMatch(e -> e.name().equals(name));
  }

  private static Set<Integer> groupsOf(List<WatchEvent> events, String name) {
    return events.stream()
        .filter(e -> e.name().equals(name))
        .map(WatchEvent::group)
        .collect(Collectors.toSet());
  }

  private void acquireAndRelease(String name) {
    Fixtures.acquireAndRelease(client, name);
  }

  /** The client address of the node leading lease group {@code group}. */
  private String leaderAddress(int group) {
    for (LeaseholdNode n : cluster.running()) {
      for (Consensus.GroupStatus g : n.consensus().groups()) {
        if (g.number() == group && g.leaderId().isPresent()) {
          return cluster.node(g.leaderId().get()).clientAddress();
        }
      }
    }
    throw new AssertionError("no leader of lease group " + group);
  }

  /** Records where each call goes, by method name. */
  private final class Targets implements ClientInterceptor {
    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      sentTo
          .computeIfAbsent(method.getBareMethodName(), m -> new CopyOnWriteArrayList<>())
          .add(next.authority());
      return next.newCall(method, options);
    }
  }
}
