package io.leasehold.client;

import static io.leasehold.client.Fixtures.await;
import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a cluster with lease groups the SDK sends a write straight to the leader of the group its
 * namespace is placed on (docs/design/multi-raft.md, "Clients"), and falls back to any node when
 * that leader goes.
 */
class GroupRoutingTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final List<String> NAMESPACES = List.of("alpha", "beta", "gamma");

  @TempDir Path dir;
  TestCluster cluster;
  LeaseholdClient client;

  /** The node each namespace's last Acquire was sent to (the channel's authority). */
  final Map<String, String> lastAcquireAt = new ConcurrentHashMap<>();

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
  void writesGoToTheirGroupsLeaderAndFailOverWhenItGoes() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.leaseGroups(3));
    // Each lease group led by the member its priority names (one a node), log format 6 everywhere.
    await(
        "every lease group led by its priority's member, log format 6 on every member",
        WAIT,
        () ->
            cluster.running().stream()
                .allMatch(
                    n ->
                        n.consensus().logFormat() >= LogFormat.GROUPS
                            && n.consensus().groups().stream()
                                .allMatch(
                                    g ->
                                        g.leaderId().isPresent()
                                            && (g.number() == 0
                                                || g.priorities()
                                                        .getOrDefault(g.leaderId().get(), 0)
                                                    > 0))));
    client = Fixtures.client(cluster, b -> b.interceptor(new AcquireTargets()));
    // The first grant in each namespace places it; each lands on a lease group of its own.
    for (String ns : NAMESPACES) {
      client.blocking().acquire(ns + "/first", ttl(60));
    }

    for (String ns : NAMESPACES) {
      await(
          () ->
              ns + "'s writes reach its group's leader " + leaderAddress(ns) + ": " + lastAcquireAt,
          WAIT,
          () -> {
            acquireAndRelease(ns + "/routed");
            return leaderAddress(ns).map(a -> a.equals(lastAcquireAt.get(ns))).orElse(false);
          });
    }
    assertEquals(
        3,
        NAMESPACES.stream().map(this::leaderAddress).distinct().count(),
        "one namespace a group, each group led by another node");

    // alpha moves to gamma's group. The next answer says the placement changed, so the client
    // asks for the table again at once rather than when it is ten seconds old: a first write in a
    // new namespace has just had it asked, and all of this happens well within those ten seconds.
    client.blocking().acquire("delta/first", ttl(60));
    long fresh = System.nanoTime();
    await("the table holds delta", WAIT, () -> statusCalls.get() > 0 && routed("delta"));
    String to = leaderAddress("gamma").orElseThrow();
    int gammaGroup = groupOf("gamma");
    int asked = statusCalls.get();
    client.cluster().moveNamespace("alpha", gammaGroup).get(60, TimeUnit.SECONDS);
    await(
        () -> "alpha's writes reach " + to + " after its move: " + lastAcquireAt,
        Duration.ofSeconds(8),
        () -> {
          acquireAndRelease("alpha/moved");
          return to.equals(lastAcquireAt.get("alpha"));
        });
    assertTrue(statusCalls.get() > asked, "the client asked for the table again");
    assertTrue(
        System.nanoTime() - fresh < TimeUnit.SECONDS.toNanos(10),
        "before the table was old enough to be asked again anyway");

    // The node leading beta's group stops: beta's writes go on through the others.
    String address = leaderAddress("beta").orElseThrow();
    String gone =
        cluster.running().stream()
            .filter(n -> n.clientAddress().equals(address))
            .findFirst()
            .orElseThrow()
            .id();
    cluster.stopNode(gone);
    for (int i = 0; i < 3; i++) {
      acquireAndRelease("beta/after-" + i);
    }
    assertTrue(
        cluster.running().stream().noneMatch(n -> n.id().equals(gone)), gone + " stays stopped");
  }

  private void acquireAndRelease(String name) {
    Fixtures.acquireAndRelease(client, name);
  }

  /** Whether {@code ns}'s last Acquire went to its group's leader. */
  private boolean routed(String ns) {
    acquireAndRelease(ns + "/routed");
    return leaderAddress(ns).map(a -> a.equals(lastAcquireAt.get(ns))).orElse(false);
  }

  /** The lease group {@code ns} is placed on. */
  private int groupOf(String ns) {
    for (LeaseholdNode n : cluster.running()) {
      for (Consensus.GroupStatus g : n.consensus().groups()) {
        if (g.number() > 0 && g.namespaces().contains(ns)) {
          return g.number();
        }
      }
    }
    throw new AssertionError(ns + " is placed on no lease group");
  }

  /** The client address of the node leading the lease group {@code ns} is placed on. */
  private Optional<String> leaderAddress(String ns) {
    Map<String, String> addresses = new HashMap<>();
    cluster.running().forEach(n -> addresses.put(n.id(), n.clientAddress()));
    for (LeaseholdNode n : cluster.running()) {
      for (Consensus.GroupStatus g : n.consensus().groups()) {
        if (g.number() > 0 && g.namespaces().contains(ns) && g.leaderId().isPresent()) {
          return Optional.ofNullable(addresses.get(g.leaderId().get()));
        }
      }
    }
    return Optional.empty();
  }

  /** Cluster/Status calls the client made: how it asks for the placement table. */
  final java.util.concurrent.atomic.AtomicInteger statusCalls =
      new java.util.concurrent.atomic.AtomicInteger();

  /** Records where each namespace's Acquire calls go, and counts Cluster/Status calls. */
  private final class AcquireTargets implements ClientInterceptor {
    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      if (method.getFullMethodName().equals("leasehold.v1.Cluster/Status")) {
        statusCalls.incrementAndGet();
      }
      return new io.grpc.ForwardingClientCall.SimpleForwardingClientCall<>(
          next.newCall(method, options)) {
        @Override
        public void sendMessage(Q message) {
          if (message instanceof io.leasehold.proto.v1.AcquireRequest r) {
            lastAcquireAt.put(r.getName().substring(0, r.getName().indexOf('/')), next.authority());
          }
          super.sendMessage(message);
        }
      };
    }
  }
}
