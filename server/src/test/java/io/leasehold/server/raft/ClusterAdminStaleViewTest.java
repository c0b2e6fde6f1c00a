package io.leasehold.server.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.server.LifecycleLog;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.api.AdminApi;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.server.RaftConfiguration;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;

/**
 * Membership calls decide "already a member" or "already gone" from this node's view of the
 * configuration, so that view must first catch up with the leader's commit index. Found by the
 * fault tests: a lagging follower answered RemoveMember with "not a member" for a node that still
 * was one, and the harness then wiped a voter's data. Here the node's view is stale until the read
 * barrier completes, as on a follower that was cut off.
 */
class ClusterAdminStaleViewTest {
  static final RaftPeer N1 = peer("n1");
  static final RaftPeer N2 = peer("n2");
  static final RaftPeer N3 = peer("n3");

  final AtomicReference<List<RaftPeer>> view = new AtomicReference<>(List.of(N1, N2));
  final List<SetConfigurationRequest.Arguments> calls = new ArrayList<>();

  static RaftPeer peer(String id) {
    return RaftPeer.newBuilder()
        .setId(id)
        .setAddress("127.0.0.1:1" + id.substring(1))
        .setClientAddress("127.0.0.1:2" + id.substring(1))
        .build();
  }

  ClusterAdmin admin() {
    RaftConfiguration conf =
        (RaftConfiguration)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {RaftConfiguration.class},
                (p, m, a) ->
                    switch (m.getName()) {
                      case "getCurrentPeers", "getAllPeers" -> view.get();
                      default -> throw new UnsupportedOperationException(m.getName());
                    });
    RaftServer.Division division =
        (RaftServer.Division)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {RaftServer.Division.class},
                (p, m, a) -> {
                  if (m.getName().equals("getRaftConf")) {
                    return conf;
                  }
                  throw new UnsupportedOperationException(m.getName());
                });
    AdminApi adminApi =
        (AdminApi)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {AdminApi.class},
                (p, m, a) -> {
                  if (m.getName().equals("setConfiguration")
                      && a.length == 1
                      && a[0] instanceof SetConfigurationRequest.Arguments args) {
                    calls.add(args);
                    view.set(List.copyOf(args.getServersInNewConf()));
                    return RaftClientReply.newBuilder()
                        .setClientId(org.apache.ratis.protocol.ClientId.randomId())
                        .setServerId(RaftPeerId.valueOf("n1"))
                        .setGroupId(RaftGroupId.randomId())
                        .setCallId(1)
                        .setSuccess()
                        .build();
                  }
                  throw new UnsupportedOperationException(m.getName());
                });
    RaftClient client =
        (RaftClient)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {RaftClient.class},
                (p, m, a) -> {
                  if (m.getName().equals("admin")) {
                    return adminApi;
                  }
                  if (m.getName().equals("close")) {
                    return null;
                  }
                  throw new UnsupportedOperationException(m.getName());
                });
    // The barrier: once "answered", this node has caught up and knows n3 is a member.
    return new ClusterAdmin(
        client,
        new ClusterAdmin.Retries(org.apache.ratis.retry.RetryPolicies.noRetry()),
        null,
        RaftGroupId.randomId(),
        RaftPeerId.valueOf("n1"),
        null,
        () -> division,
        new LifecycleLog("n1"),
        () -> {
          view.set(List.of(N1, N2, N3));
          return CompletableFuture.completedFuture(null);
        },
        java.util.Optional.empty(),
        java.util.OptionalInt.empty());
  }

  @Test
  void removingAMemberThisNodeDoesNotYetKnowOfRemovesItAfterCatchingUp() throws Exception {
    try (ClusterAdmin admin = admin()) {
      List<RaftPeer> after = admin.removeMember("n3").get(10, TimeUnit.SECONDS);
      assertEquals(
          1,
          calls.size(),
          "RemoveMember must change the configuration the leader has, not trust a stale view");
      assertEquals(List.of(N1, N2, N3), List.copyOf(calls.get(0).getServersInCurrentConf()));
      assertEquals(List.of(N1, N2), after);
    }
  }

  @Test
  void addingAMemberThisNodeDoesNotYetKnowOfChangesNothing() throws Exception {
    try (ClusterAdmin admin = admin()) {
      List<RaftPeer> after =
          admin.addMember("n3", N3.getAddress(), N3.getClientAddress()).get(10, TimeUnit.SECONDS);
      assertEquals(0, calls.size(), "n3 is already a member at the leader: nothing to change");
      assertEquals(List.of(N1, N2, N3), after);
    }
  }
}
