package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.internal.Futures;
import io.leasehold.proto.Partitions;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The calls operators make (and the CLI is built on): renew and release by token, deregister and
 * set a status by token, one-off routes, cluster status and one node's status, admin.
 */
class OperatorCallsTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = Fixtures.stableThreeNodes(dir);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  @Test
  void releaseByTokenEndsSomeoneElsesLeaseOnlyWithItsToken() throws Exception {
    try (LeaseholdClient holder = Fixtures.client(cluster, b -> b.releaseOnClose(false));
        LeaseholdClient operator = Fixtures.client(cluster)) {
      AcquireResult r = holder.blocking().tryAcquire("ops/release", Fixtures.ttl(30));
      long token = assertInstanceOf(Granted.class, r).lease().token();
      assertFalse(
          operator.blocking().release("ops/release", token - 1),
          "an older token is not the live lease's");
      assertTrue(operator.blocking().release("ops/release", token));
      assertEquals(Optional.empty(), operator.blocking().get("ops/release"));
      assertFalse(
          operator.blocking().release("ops/release", token), "releasing twice answers not held");
    }
  }

  @Test
  void renewByTokenExtendsSomeoneElsesLeaseOnlyWithItsToken() throws Exception {
    try (LeaseholdClient holder = Fixtures.client(cluster, b -> b.releaseOnClose(false));
        LeaseholdClient operator = Fixtures.client(cluster)) {
      long token =
          assertInstanceOf(
                  Granted.class, holder.blocking().tryAcquire("ops/renew", Fixtures.ttl(30)))
              .lease()
              .token();
      LeaseInfo before = operator.blocking().get("ops/renew").orElseThrow();
      Renewal r = operator.blocking().renew("ops/renew", token).orElseThrow();
      assertEquals("ops/renew", r.name());
      assertEquals(token, r.token());
      assertEquals(Duration.ofSeconds(30), r.ttl());
      assertTrue(r.heartbeatInterval().isPresent());
      assertTrue(r.expiresAt().isAfter(before.renewedAt()), r + " after " + before);
      LeaseInfo after = operator.blocking().get("ops/renew").orElseThrow();
      assertTrue(after.renewCount() > before.renewCount(), "renewed: " + after);
      assertEquals(
          Optional.empty(),
          operator.blocking().renew("ops/renew", token - 1),
          "another token is not the live lease's");
      assertTrue(operator.blocking().release("ops/renew", token));
      assertEquals(
          Optional.empty(),
          operator.blocking().renew("ops/renew", token),
          "a released lease is not renewed");
    }
  }

  @Test
  void deregisterAndSetStatusByTokenActOnSomeoneElsesRegistration() throws Exception {
    try (LeaseholdClient instance = Fixtures.client(cluster, b -> b.releaseOnClose(false));
        LeaseholdClient operator = Fixtures.client(cluster)) {
      long token =
          instance
              .blocking()
              .register(
                  "ops-svc",
                  "i-1",
                  "10.0.0.7:80",
                  Map.of("zone", "a"),
                  RegisterOptions.DEFAULTS.withTtl(Duration.ofSeconds(30)))
              .token();
      assertEquals(
          Optional.empty(),
          operator.blocking().setStatus("ops-svc", "i-1", token - 1, Registration.DRAINING));
      ServiceInstance drained =
          operator
              .blocking()
              .setStatus("ops-svc", "i-1", token, Registration.DRAINING)
              .orElseThrow();
      assertEquals(Optional.of(Registration.DRAINING), drained.status());
      assertEquals("10.0.0.7:80", drained.address(), "the address stays as registered");
      assertEquals(Map.of("zone", "a"), drained.metadata());
      assertEquals(token, drained.token());
      assertEquals(
          List.of(), operator.blocking().resolve("ops-svc"), "a draining instance is not resolved");
      assertFalse(operator.blocking().deregister("ops-svc", "i-1", token - 1));
      assertTrue(operator.blocking().deregister("ops-svc", "i-1", token));
      assertEquals(List.of(), operator.blocking().resolve("ops-svc", true));
      assertFalse(
          operator.blocking().deregister("ops-svc", "i-1", token),
          "deregistering twice answers not live");
    }
  }

  @Test
  void theStatusOfOneNodeIsAskedOfThatNodeOnly() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      for (String id : cluster.ids()) {
        NodeStatus s = client.cluster().status(cluster.node(id).clientAddress()).join();
        assertEquals(id, s.nodeId(), "the node at its address answered");
        assertEquals(3, s.members().size());
      }
      int[] closed = TestCluster.freePorts(1);
      var down =
          assertThrows(
              ClusterUnavailableException.class,
              () -> Futures.join(client.cluster().status("127.0.0.1:" + closed[0])));
      assertTrue(down.getMessage().contains("127.0.0.1:" + closed[0]), down.getMessage());
    }
  }

  @Test
  void lookupAndRoutesReadTheRoutingTableOnce() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Lease a =
          client
              .blocking()
              .acquire(
                  "route/a",
                  Fixtures.ttl(30).withAddress("10.0.0.1:80").withMetadata("zone", "z1"));
      client.blocking().acquire("route/b", Fixtures.ttl(30));
      Route found = client.blocking().lookup("route/a").orElseThrow();
      assertEquals("10.0.0.1:80", found.address());
      assertEquals(a.token(), found.token());
      assertEquals(Partitions.of("route/a"), found.partition());
      assertEquals(
          Optional.empty(),
          client.blocking().lookup("route/b"),
          "a lease without an address is no route");
      assertEquals(
          List.of("route/a"),
          client.blocking().routes("route/").stream().map(Route::name).toList());
    }
  }

  @Test
  void clusterStatusAsksEveryMemberAndReportsAnUnreachableOne() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      ClusterStatus status = client.blocking().clusterStatus();
      assertEquals(3, status.members().size());
      assertEquals(1, status.members().stream().filter(m -> m.role() == MemberRole.LEADER).count());
      for (MemberStatus m : status.members()) {
        assertTrue(m.reachable(), m.toString());
        assertTrue(m.appliedIndex() > 0, m.toString());
        assertTrue(status.lag(m).isPresent());
      }
      TestCluster.await(
          "every member healthy",
          Duration.ofSeconds(30),
          () ->
              client.blocking().clusterStatus().members().stream()
                  .allMatch(m -> client.blocking().clusterStatus().healthy(m)));

      String follower = cluster.followers().get(0).id();
      cluster.stopNode(follower);
      try {
        ClusterStatus without = client.blocking().clusterStatus();
        MemberStatus down =
            without.members().stream()
                .filter(m -> m.id().equals(follower))
                .findFirst()
                .orElseThrow();
        assertFalse(down.reachable());
        assertFalse(without.healthy(down));
        assertEquals(Optional.empty(), without.lag(down));
      } finally {
        cluster.startNode(follower);
      }
    }
  }

  @Test
  void policiesAreSetReadListedAndDeleted() {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      LeaseholdAdmin admin = client.admin();
      PolicyInfo none = admin.policy("pol").join();
      assertTrue(none.inherited());
      Policy set = Policy.builder().maxTtl(Duration.ofSeconds(60)).maxLeasesPerHolder(3).build();
      Policy effective = admin.policy("pol").thenCompose(p -> admin.setPolicy("pol", set)).join();
      assertEquals(Duration.ofSeconds(60), effective.maxTtl().orElseThrow());
      PolicyInfo own = admin.policy("pol").join();
      assertEquals(set, own.own().orElseThrow());
      assertTrue(own.revision() > 0);
      assertTrue(admin.policies().join().stream().anyMatch(p -> p.namespace().equals("pol")));
      assertTrue(admin.deletePolicy("pol").join());
      assertFalse(admin.deletePolicy("pol").join());
      var bad =
          assertThrows(
              InvalidRequestException.class,
              () -> Futures.join(admin.setPolicy("a/b", Policy.builtIn())));
      assertTrue(bad.getMessage().contains("namespace"), bad.getMessage());
    }
  }

  @Test
  void bansEndLeasesAndAreListedUntilLifted() throws Exception {
    try (LeaseholdClient banned =
            Fixtures.client(cluster, b -> b.holder("runner-banned").releaseOnClose(false));
        LeaseholdClient operator = Fixtures.client(cluster)) {
      banned.blocking().acquire("ban/x", Fixtures.ttl(30));
      BanInfo ban =
          operator.admin().ban("runner-banned", "runaway", Optional.of(Duration.ofHours(1))).join();
      assertEquals(1, ban.leasesEnded());
      assertTrue(ban.until().isPresent());
      assertEquals(
          List.of("runner-banned"),
          operator.admin().bans().join().stream().map(BanInfo::holder).toList());
      assertInstanceOf(Rejected.class, banned.blocking().tryAcquire("ban/y", Fixtures.ttl(30)));
      assertTrue(operator.admin().unban("runner-banned").join());
      assertFalse(operator.admin().unban("runner-banned").join());
      assertEquals(List.of(), operator.admin().bans().join());
      List<EndedLease> history = operator.admin().historyOfHolder("runner-banned", 0).join();
      assertEquals(EndReason.BANNED, history.get(0).reason());
      assertEquals(Optional.of("runaway"), history.get(0).message());
    }
  }

  @Test
  void revokeEndsTheLiveLeaseAndTheHistorySaysWhy() throws Exception {
    try (LeaseholdClient holder = Fixtures.client(cluster, b -> b.releaseOnClose(false));
        LeaseholdClient operator = Fixtures.client(cluster)) {
      long token = holder.blocking().acquire("rev/x", Fixtures.ttl(30)).token();
      assertEquals(
          Optional.empty(), operator.admin().revoke("rev/x", "wrong one", token - 1).join());
      LeaseInfo revoked = operator.admin().revoke("rev/x", "stuck job", 0).join().orElseThrow();
      assertEquals(token, revoked.token());
      assertEquals(Optional.empty(), operator.admin().revoke("rev/x", "again", 0).join());
      EndedLease ended = operator.admin().history("rev/x", 10).join().get(0);
      assertEquals(token, ended.token());
      assertEquals(EndReason.REVOKED, ended.reason());
      assertEquals(Optional.of("stuck job"), ended.message());
    }
  }
}
