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
