package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Service registration that renews itself, changes status, re-registers after a loss and
 * deregisters on close.
 */
class RegistryTest {
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
  void aRegisteredInstanceResolvesAndDrainingHidesIt() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Registration r =
          client.blocking().register("payments", "i-1", "10.0.0.7:8443", Map.of("zone", "a"));
      assertEquals(RegistrationState.REGISTERED, r.state());
      List<ServiceInstance> live = client.blocking().resolve("payments");
      assertEquals(1, live.size());
      ServiceInstance i = live.get(0);
      assertEquals("i-1", i.instance());
      assertEquals("10.0.0.7:8443", i.address());
      assertEquals(Map.of("zone", "a"), i.metadata());
      assertEquals(r.token(), i.token());
      assertEquals(client.holder(), i.holder());

      r.setStatus(Registration.DRAINING).get();
      assertEquals(Registration.DRAINING, r.status());
      assertEquals(
          List.of(), client.blocking().resolve("payments"), "a draining instance gets no new work");
      assertEquals(
          Registration.DRAINING,
          client.blocking().resolve("payments", true).get(0).status().orElseThrow());
      r.close();
    }
  }

  @Test
  void closingTheRegistrationDeregistersTheInstance() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Registration r = client.blocking().register("orders", "i-1", "10.0.0.8:80", Map.of());
      r.close();
      assertEquals(RegistrationState.DEREGISTERED, r.state());
      assertEquals(List.of(), client.blocking().resolve("orders", true));
      assertThrows(IllegalStateException.class, r::deregister);
      r.close(); // idempotent
    }
  }

  @Test
  void aRegistrationRenewsItselfAndRegistersAgainAfterItsLeaseIsLost() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Registration r =
          client
              .blocking()
              .register(
                  "search",
                  "i-3",
                  "10.0.0.9:80",
                  Map.of(),
                  RegisterOptions.DEFAULTS.withTtl(Duration.ofSeconds(3)));
      List<RegistrationState> states = new CopyOnWriteArrayList<>();
      r.addListener((reg, from, to) -> states.add(to));
      long first = r.token();
      long start = System.nanoTime();
      Fixtures.await(
          "more than a TTL",
          Duration.ofSeconds(10),
          () -> System.nanoTime() - start > Duration.ofMillis(3500).toNanos());
      assertEquals(
          first,
          client.blocking().resolve("search").get(0).token(),
          "still registered after a TTL: it renews itself");

      // The lease ends behind the client's back (as an operator's revoke would).
      cluster
          .leases(cluster.ids().get(0))
          .release(io.leasehold.server.Requests.release("service/search/i-3", first));
      Fixtures.await(
          "registered again",
          Duration.ofSeconds(15),
          () -> r.state() == RegistrationState.REGISTERED && r.token() != first);
      assertTrue(r.token() > first);
      assertEquals(r.token(), client.blocking().resolve("search").get(0).token());
      Fixtures.await("both changes delivered", Duration.ofSeconds(5), () -> states.size() >= 2);
      assertEquals(
          List.of(RegistrationState.LOST, RegistrationState.REGISTERED),
          states.subList(states.size() - 2, states.size()),
          states.toString());
      r.close();
    }
  }

  @Test
  void aRegistrationLivesWithTheClientsSessionAndRegistersAgainWhenTheSessionIsClosed()
      throws Exception {
    try (LeaseholdClient client =
            Fixtures.client(cluster, b -> b.holder("api-s1").sessionTtl(Duration.ofSeconds(3)));
        LeaseholdClient operator = Fixtures.client(cluster)) {
      Lease lock = client.blocking().acquire("lock/api-s1", LeaseOptions.defaults());
      Registration r = client.blocking().register("inventory", "i-1", "10.0.1.1:80", Map.of());
      long session = r.lease().session();
      assertEquals(
          lock.session(), session, "the registration and the lock share the client's one session");
      assertEquals(
          session, operator.blocking().get("service/inventory/i-1").orElseThrow().session());
      long start = System.nanoTime();
      Fixtures.await(
          "more than a session TTL",
          Duration.ofSeconds(10),
          () -> System.nanoTime() - start > Duration.ofMillis(4000).toNanos());
      assertEquals(
          r.token(),
          operator.blocking().resolve("inventory").get(0).token(),
          "kept alive by the session's keep-alive");

      long first = r.token();
      operator.admin().closeSession(session).get(10, TimeUnit.SECONDS);
      Fixtures.await(
          "registered again in a new session",
          Duration.ofSeconds(15),
          () -> r.state() == RegistrationState.REGISTERED && r.token() != first);
      assertTrue(
          r.lease().session() != 0 && r.lease().session() != session,
          "a new session: " + r.lease().session());
      assertEquals(r.token(), operator.blocking().resolve("inventory").get(0).token());

      Registration own =
          client
              .blocking()
              .register(
                  "inventory",
                  "i-2",
                  "10.0.1.2:80",
                  Map.of(),
                  RegisterOptions.DEFAULTS.withTtl(Duration.ofSeconds(5)));
      assertEquals(0, own.lease().session(), "a TTL of its own: not in the session");
    }
  }

  @Test
  void registeringAnInstanceAnotherHolderOwnsFailsWithTheConflict() throws Exception {
    try (LeaseholdClient a = Fixtures.client(cluster);
        LeaseholdClient b = Fixtures.client(cluster)) {
      Registration mine = a.blocking().register("billing", "i-9", "10.0.0.10:80", Map.of());
      ExecutionException e =
          assertThrows(
              ExecutionException.class,
              () -> b.register("billing", "i-9", "10.0.0.11:80", Map.of()).get());
      LeaseConflictException conflict = (LeaseConflictException) e.getCause();
      assertEquals(a.holder(), conflict.conflict().holder());
      assertEquals(mine.token(), conflict.conflict().token());
      InvalidRequestException bad =
          assertThrows(
              InvalidRequestException.class,
              () -> b.blocking().register("bill/ing", "i-1", "10.0.0.1:80", Map.of()));
      assertTrue(bad.getMessage().startsWith("service: must not contain '/'"), bad.getMessage());
    }
  }

  @Test
  void resolveChangeAnswersWhenTheServicesInstancesChange() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Registration first = client.blocking().register("catalog", "c-1", "10.0.2.1:80", Map.of());
      ResolvedService now = client.blocking().resolve("catalog", ServiceFilter.serving());
      assertTrue(now.version() > 0);

      // A client without a stream: ask for anything newer than the version it serves.
      CompletableFuture<ResolvedService> next =
          client.resolveChange(
              "catalog", ServiceFilter.serving(), now.version(), Duration.ofSeconds(50));
      Fixtures.await(
          "the blocking Resolve is held by a node",
          Duration.ofSeconds(30),
          () -> cluster.running().stream().mapToInt(n -> n.waitingResolves()).sum() == 1);
      client.blocking().register("catalog", "c-2", "10.0.2.2:80", Map.of());
      ResolvedService changed = next.get(30, TimeUnit.SECONDS);
      assertTrue(changed.version() > now.version());
      assertEquals(
          List.of("c-1", "c-2"),
          changed.instances().stream().map(ServiceInstance::instance).toList());

      first.setStatus(Registration.DRAINING).get();
      ResolvedService drained =
          client
              .blocking()
              .resolveChange(
                  "catalog", ServiceFilter.serving(), changed.version(), Duration.ofSeconds(50));
      assertEquals(
          List.of("c-2"), drained.instances().stream().map(ServiceInstance::instance).toList());
      assertTrue(drained.version() > changed.version());
    }
  }

  @Test
  void resolveWithAFilterPrefersZonesInOrderAndMatchesMetadata() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Registration a1 =
          client
              .blocking()
              .register("search", "s-a1", "10.0.1.1:80", Map.of("zone", "eu-a", "version", "2.3"));
      client
          .blocking()
          .register("search", "s-a2", "10.0.1.2:80", Map.of("zone", "eu-a", "version", "2.2"));
      client
          .blocking()
          .register("search", "s-b1", "10.0.1.3:80", Map.of("zone", "eu-b", "version", "2.3"));

      ServiceFilter nearFirst = ServiceFilter.serving().inZones("eu-a", ServiceFilter.ANY_ZONE);
      ResolvedService near = client.blocking().resolve("search", nearFirst);
      assertEquals(
          List.of("s-a1", "s-a2"),
          near.instances().stream().map(ServiceInstance::instance).toList());
      assertEquals(Optional.of("eu-a"), near.zone());
      assertTrue(near.revision() > 0);

      ResolvedService v23 =
          client.blocking().resolve("search", nearFirst.withMetadata("version", "2.3"));
      assertEquals(
          List.of("s-a1"), v23.instances().stream().map(ServiceInstance::instance).toList());

      // The preferred zone's 2.3 instance drains: the wildcard takes any zone's.
      a1.setStatus(Registration.DRAINING).get();
      ResolvedService fallback =
          client.blocking().resolve("search", nearFirst.withMetadata("version", "2.3"));
      assertEquals(
          List.of("s-b1"), fallback.instances().stream().map(ServiceInstance::instance).toList());
      assertEquals(Optional.of(ServiceFilter.ANY_ZONE), fallback.zone());
      ResolvedService draining =
          client
              .blocking()
              .resolve(
                  "search",
                  ServiceFilter.serving().inZones("eu-a").withStatuses(Registration.DRAINING));
      assertEquals(
          List.of("s-a1"), draining.instances().stream().map(ServiceInstance::instance).toList());
      ResolvedService none =
          client.blocking().resolve("search", ServiceFilter.serving().inZones("us-east"));
      assertEquals(List.of(), none.instances());
      assertEquals(Optional.empty(), none.zone());

      InvalidRequestException twice =
          assertThrows(
              InvalidRequestException.class,
              () ->
                  client
                      .blocking()
                      .resolve("search", ServiceFilter.serving().inZones("eu-a", "eu-a")));
      assertTrue(twice.getMessage().startsWith("zones[1]:"), twice.getMessage());
      ResolvedService every =
          client.blocking().resolve("search", ServiceFilter.serving().inZones("eu-a").anyStatus());
      assertEquals(
          List.of("s-a1", "s-a2"),
          every.instances().stream().map(ServiceInstance::instance).toList());
    }
  }
}
