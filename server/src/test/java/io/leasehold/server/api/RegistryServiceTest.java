package io.leasehold.server.api;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static io.leasehold.server.Requests.renew;
import static io.leasehold.server.Requests.seconds;
import static io.leasehold.server.Requests.staleGet;
import static io.leasehold.server.TestCluster.await;
import static io.leasehold.server.api.ViewStubs.assertInvalid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.util.Timestamps;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.CloseSessionRequest;
import io.leasehold.proto.v1.CreateSessionRequest;
import io.leasehold.proto.v1.CreateSessionResponse;
import io.leasehold.proto.v1.DeregisterRequest;
import io.leasehold.proto.v1.DeregisterResponse;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.Instance;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.RegisterResponse;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.ResolveRequest;
import io.leasehold.proto.v1.ResolveResponse;
import io.leasehold.proto.v1.SetStatusRequest;
import io.leasehold.proto.v1.SetStatusResponse;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry on a real three-node cluster. Calls go to followers (writes are forwarded to the
 * leader); every test uses its own service. Leases that are meant to live get a long TTL so that
 * nothing expires behind the bad-input checks, which compare every lease before and after.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RegistryServiceTest {
  static final long LONG_TTL = 600;

  TestCluster cluster;
  String a;
  String b;
  RegistryGrpc.RegistryBlockingStub registry;
  RegistryGrpc.RegistryBlockingStub registryB;
  LeasesGrpc.LeasesBlockingStub leases;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    cluster = TestCluster.start(3, dir);
    a = cluster.followers().get(0).id();
    b = cluster.followers().get(1).id();
    registry = ViewStubs.registry(cluster, a);
    registryB = ViewStubs.registry(cluster, b);
    leases = cluster.leases(a);
  }

  @AfterAll
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static RegisterRequest register(
      String service, String instance, String address, long ttlSeconds) {
    return RegisterRequest.newBuilder()
        .setService(service)
        .setInstance(instance)
        .setAddress(address)
        .setTtl(seconds(ttlSeconds))
        .build();
  }

  static ResolveRequest resolve(String service) {
    return ResolveRequest.newBuilder().setService(service).build();
  }

  static DeregisterRequest deregister(String service, String instance, long token) {
    return DeregisterRequest.newBuilder()
        .setService(service)
        .setInstance(instance)
        .setToken(token)
        .build();
  }

  static SetStatusRequest setStatus(String service, String instance, long token, String status) {
    return SetStatusRequest.newBuilder()
        .setService(service)
        .setInstance(instance)
        .setToken(token)
        .setStatus(status)
        .build();
  }

  static List<String> names(ResolveResponse r) {
    return r.getInstancesList().stream().map(Instance::getInstance).toList();
  }

  private Instance registered(RegisterRequest request) {
    RegisterResponse r = registry.register(request);
    assertEquals(Outcome.GRANTED, r.getOutcome(), r.toString());
    return r.getInstance();
  }

  @Test
  void registerResolveDeregister() {
    RegisterResponse r2 =
        registry.register(
            register("orders", "i-2", "10.0.0.2:8080", LONG_TTL).toBuilder()
                .putMetadata("zone", "eu-1")
                .build());
    assertEquals(Outcome.GRANTED, r2.getOutcome());
    Instance i2 = r2.getInstance();
    assertEquals("orders", i2.getService());
    assertEquals("i-2", i2.getInstance());
    assertEquals("10.0.0.2:8080", i2.getAddress());
    assertEquals(Map.of("zone", "eu-1"), i2.getMetadataMap());
    assertEquals("SERVING", i2.getStatus(), "the default status");
    assertEquals("orders/i-2", i2.getHolder(), "the default holder");
    assertTrue(i2.getToken() > 0);
    assertEquals(
        r2.getRevision() * 4096,
        i2.getToken(),
        "a fresh registration's token derives from the entry that granted it");
    assertEquals(seconds(LONG_TTL / 3), r2.getHeartbeatInterval());
    RegisterResponse r1 = registry.register(register("orders", "i-1", "10.0.0.1:8080", LONG_TTL));
    assertEquals(Outcome.GRANTED, r1.getOutcome(), r1.toString());
    Instance i1 = r1.getInstance();
    registered(register("orders-eu", "i-0", "10.0.1.1:8080", LONG_TTL));

    // A view over leases: the instance is the lease service/orders/i-2, attributes and all.
    GetResponse lease = leases.get(get("service/orders/i-2"));
    assertTrue(lease.getFound());
    assertEquals(i2.getToken(), lease.getLease().getToken());
    assertEquals(
        Attributes.newBuilder()
            .setAddress("10.0.0.2:8080")
            .putMetadata("zone", "eu-1")
            .setStatus("SERVING")
            .build(),
        lease.getLease().getAttributes());
    assertEquals(lease.getLease().getExpiresAt(), i2.getExpiresAt());

    ResolveResponse resolved = registryB.resolve(resolve("orders"));
    assertEquals(List.of("i-1", "i-2"), names(resolved), "in instance order, and not orders-eu's");
    assertTrue(resolved.getRevision() >= r1.getRevision(), "the read reflects both registrations");
    assertEquals(i2, resolved.getInstances(1), "the instance as registered");
    await(
        "a stale resolve on a follower sees both",
        Duration.ofSeconds(10),
        () ->
            names(registryB.resolve(resolve("orders").toBuilder().setStale(true).build()))
                .equals(List.of("i-1", "i-2")));

    // The same holder registering again gets the same instance (same token), renewed.
    RegisterResponse again =
        registry.register(register("orders", "i-1", "10.0.0.1:8080", LONG_TTL));
    assertEquals(Outcome.GRANTED, again.getOutcome());
    assertEquals(i1.getToken(), again.getInstance().getToken());

    DeregisterResponse gone = registry.deregister(deregister("orders", "i-1", i1.getToken()));
    assertEquals(Outcome.RELEASED, gone.getOutcome());
    assertTrue(gone.getRevision() > again.getRevision());
    assertEquals(List.of("i-2"), names(registryB.resolve(resolve("orders"))));
    assertFalse(leases.get(get("service/orders/i-1")).getFound());
    assertEquals(
        Outcome.NOT_HELD,
        registry.deregister(deregister("orders", "i-1", i1.getToken())).getOutcome());
    assertEquals(
        Outcome.RELEASED,
        registry.deregister(deregister("orders", "i-2", i2.getToken())).getOutcome());
    assertEquals(List.of(), names(registry.resolve(resolve("orders"))));
  }

  @Test
  void resolveCarriesTheVersionAndABlockingResolveAnswersOnTheNextChange() throws Exception {
    RegisterResponse r1 = registry.register(register("versioned", "i-1", "10.0.0.1:80", LONG_TTL));
    ResolveResponse first = registryB.resolve(resolve("versioned"));
    assertEquals(r1.getRevision(), first.getVersion(), "the revision of the last change");
    leases.renew(
        io.leasehold.proto.v1.RenewRequest.newBuilder()
            .addItems(
                io.leasehold.proto.v1.RenewItem.newBuilder()
                    .setName("service/versioned/i-1")
                    .setToken(r1.getInstance().getToken()))
            .build());
    assertEquals(
        first.getVersion(),
        registryB.resolve(resolve("versioned")).getVersion(),
        "a renewal changes no version");

    // Wait for anything newer than the version read: the call is held until the next change.
    var waiting =
        RegistryGrpc.newFutureStub(cluster.channel(b))
            .withDeadlineAfter(60, java.util.concurrent.TimeUnit.SECONDS)
            .resolve(
                resolve("versioned").toBuilder()
                    .setWaitForVersion(first.getVersion())
                    .setWait(seconds(50))
                    .build());
    await(
        "the blocking Resolve is held on " + b,
        Duration.ofSeconds(30),
        () -> cluster.node(b).waitingResolves() == 1);
    assertFalse(waiting.isDone());
    RegisterResponse r2 = registry.register(register("versioned", "i-2", "10.0.0.2:80", LONG_TTL));
    ResolveResponse changed = waiting.get(30, java.util.concurrent.TimeUnit.SECONDS);
    assertEquals(r2.getRevision(), changed.getVersion());
    assertEquals(List.of("i-1", "i-2"), names(changed));
    await(
        "the answered call is no longer held",
        Duration.ofSeconds(10),
        () -> cluster.node(b).waitingResolves() == 0);

    // Already newer: at once. Nothing newer within the wait: the state as it is then.
    assertEquals(
        r2.getRevision(),
        registryB
            .resolve(resolve("versioned").toBuilder().setWaitForVersion(r1.getRevision()).build())
            .getVersion());
    ResolveResponse unchanged =
        registryB.resolve(
            resolve("versioned").toBuilder()
                .setWaitForVersion(r2.getRevision())
                .setWait(seconds(1))
                .build());
    assertEquals(r2.getRevision(), unchanged.getVersion());
    assertEquals(List.of("i-1", "i-2"), names(unchanged));
  }

  @Test
  void aBlockingResolveIsRefusedBadInputByField() {
    for (var bad :
        List.of(
            Map.entry(resolve("v").toBuilder().setWait(seconds(5)).build(), "wait"),
            Map.entry(
                resolve("v").toBuilder().setWaitForVersion(1).setWait(seconds(601)).build(),
                "wait"),
            Map.entry(
                resolve("v").toBuilder().setWaitForVersion(-1).build(), "wait_for_version"))) {
      io.grpc.StatusRuntimeException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              io.grpc.StatusRuntimeException.class, () -> registry.resolve(bad.getKey()));
      assertEquals(io.grpc.Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
      assertTrue(
          e.getStatus().getDescription().startsWith(bad.getValue() + ":"),
          e.getStatus().getDescription());
    }
  }

  @Test
  void secondRegistrationOfSameInstanceByAnotherHolderConflicts() {
    Instance first =
        registered(
            register("payments", "p-1", "10.0.2.1:80", LONG_TTL).toBuilder()
                .setHolder("pod-a")
                .build());
    assertEquals("pod-a", first.getHolder());

    RegisterResponse second =
        registryB.register(
            register("payments", "p-1", "10.0.2.99:80", LONG_TTL).toBuilder()
                .setHolder("pod-b")
                .build());
    assertEquals(Outcome.CONFLICT, second.getOutcome());
    assertEquals("pod-a", second.getConflict().getHolder());
    assertEquals(first.getToken(), second.getConflict().getToken());
    assertFalse(second.hasInstance());

    ResolveResponse resolved = registry.resolve(resolve("payments"));
    assertEquals(1, resolved.getInstancesCount());
    assertEquals(
        "10.0.2.1:80", resolved.getInstances(0).getAddress(), "the first registration stands");
    assertEquals("pod-a", resolved.getInstances(0).getHolder());
  }

  @Test
  void setStatusDrainingRemovesFromResolveButKeepsAddressAndMetadata() {
    Instance serving =
        registered(
            register("search", "s-1", "10.0.3.1:9200", LONG_TTL).toBuilder()
                .putMetadata("version", "7")
                .putMetadata("zone", "eu-2")
                .build());
    registered(register("search", "s-2", "10.0.3.2:9200", LONG_TTL));

    SetStatusResponse draining =
        registryB.setStatus(setStatus("search", "s-1", serving.getToken(), "DRAINING"));
    assertEquals(Outcome.UPDATED, draining.getOutcome());
    assertEquals(
        serving.toBuilder().setStatus("DRAINING").build(),
        draining.getInstance(),
        "only the status changed: same address, metadata, token, holder and expiry");
    assertEquals(List.of("s-2"), names(registry.resolve(resolve("search"))));
    GetResponse lease = leases.get(get("service/search/s-1"));
    assertEquals("10.0.3.1:9200", lease.getLease().getAttributes().getAddress());
    assertEquals(
        Map.of("version", "7", "zone", "eu-2"), lease.getLease().getAttributes().getMetadataMap());

    // Another holder's token, or one that no longer holds the instance, changes nothing.
    assertEquals(
        Outcome.NOT_HELD,
        registry
            .setStatus(setStatus("search", "s-1", serving.getToken() + 1, "SERVING"))
            .getOutcome());
    assertEquals(List.of("s-2"), names(registry.resolve(resolve("search"))));

    assertEquals(
        Outcome.UPDATED,
        registry.setStatus(setStatus("search", "s-1", serving.getToken(), "SERVING")).getOutcome());
    assertEquals(List.of("s-1", "s-2"), names(registryB.resolve(resolve("search"))));
  }

  @Test
  void resolveAnyStatusListsDrainingInstances() {
    Instance d = registered(register("billing", "b-1", "10.0.4.1:80", LONG_TTL));
    registered(register("billing", "b-2", "10.0.4.2:80", LONG_TTL));
    registered(
        register("billing", "b-3", "10.0.4.3:80", LONG_TTL).toBuilder()
            .setStatus("STARTING")
            .build());
    assertEquals(
        Outcome.UPDATED,
        registry.setStatus(setStatus("billing", "b-1", d.getToken(), "DRAINING")).getOutcome());
    // Leases under the prefix made through the Leases API: one is an instance without a status,
    // the other has a deeper name and is no instance at all.
    assertEquals(
        Outcome.GRANTED,
        leases.acquire(acquire("service/billing/b-0", "raw", LONG_TTL)).getOutcome());
    assertEquals(
        Outcome.GRANTED,
        leases
            .acquire(
                AcquireRequest.newBuilder(acquire("service/billing/b-9/extra", "raw", LONG_TTL))
                    .setAttributes(
                        Attributes.newBuilder().setStatus("SERVING").setAddress("10.0.4.9:80"))
                    .build())
            .getOutcome());

    assertEquals(List.of("b-2"), names(registryB.resolve(resolve("billing"))));
    ResolveResponse all =
        registryB.resolve(resolve("billing").toBuilder().setAnyStatus(true).build());
    assertEquals(List.of("b-0", "b-1", "b-2", "b-3"), names(all));
    assertEquals(
        List.of("", "DRAINING", "SERVING", "STARTING"),
        all.getInstancesList().stream().map(Instance::getStatus).toList());
  }

  private Instance registeredIn(String service, String instance, String zone, String version) {
    RegisterRequest.Builder r = register(service, instance, "10.0.9.1:80", LONG_TTL).toBuilder();
    if (zone != null) {
      r.putMetadata("zone", zone);
    }
    if (version != null) {
      r.putMetadata("version", version);
    }
    return registered(r.build());
  }

  static ResolveRequest inZones(String service, String... zones) {
    return resolve(service).toBuilder().addAllZones(List.of(zones)).build();
  }

  @Test
  void resolveTakesTheFirstPreferredZoneThatHasAMatchingInstance() {
    registeredIn("maps", "m-a1", "eu-a", "2.3");
    registeredIn("maps", "m-a2", "eu-a", "2.2");
    registeredIn("maps", "m-b1", "eu-b", "2.3");
    registeredIn("maps", "m-none", null, "2.3");

    ResolveResponse a = registryB.resolve(inZones("maps", "eu-a", "eu-b"));
    assertEquals(List.of("m-a1", "m-a2"), names(a));
    assertEquals("eu-a", a.getZone());

    ResolveResponse missingFirst = registryB.resolve(inZones("maps", "us-east", "eu-b", "eu-a"));
    assertEquals(List.of("m-b1"), names(missingFirst));
    assertEquals("eu-b", missingFirst.getZone());

    ResolveResponse anyZone = registryB.resolve(inZones("maps", "us-east", "*"));
    assertEquals(List.of("m-a1", "m-a2", "m-b1", "m-none"), names(anyZone));
    assertEquals("*", anyZone.getZone());

    ResolveResponse nowhere = registryB.resolve(inZones("maps", "us-east", "us-west"));
    assertEquals(List.of(), names(nowhere));
    assertEquals("", nowhere.getZone());

    ResolveResponse noZones = registryB.resolve(resolve("maps"));
    assertEquals(List.of("m-a1", "m-a2", "m-b1", "m-none"), names(noZones));
    assertEquals("", noZones.getZone(), "no zones asked, none named");

    // Metadata filters first: in eu-a only m-a1 runs 2.3.
    ResolveResponse v23 =
        registryB.resolve(
            inZones("maps", "eu-a", "eu-b").toBuilder().putMetadata("version", "2.3").build());
    assertEquals(List.of("m-a1"), names(v23));
    ResolveResponse v24 =
        registryB.resolve(
            inZones("maps", "eu-a", "*").toBuilder().putMetadata("version", "2.4").build());
    assertEquals(List.of(), names(v24));
    assertEquals("", v24.getZone());
    ResolveResponse both =
        registryB.resolve(
            resolve("maps").toBuilder()
                .putMetadata("version", "2.3")
                .putMetadata("zone", "eu-b")
                .build());
    assertEquals(List.of("m-b1"), names(both), "every pair must match");
  }

  @Test
  void aZoneThatEmptiesFallsToTheNextAndComesBackWhenItFills() {
    Instance only = registeredIn("geo", "g-a1", "eu-a", null);
    registeredIn("geo", "g-b1", "eu-b", null);
    assertEquals("eu-a", registryB.resolve(inZones("geo", "eu-a", "eu-b")).getZone());

    // Draining the zone's one instance empties it for SERVING callers.
    assertEquals(
        Outcome.UPDATED,
        registry.setStatus(setStatus("geo", "g-a1", only.getToken(), "DRAINING")).getOutcome());
    ResolveResponse fellBack = registryB.resolve(inZones("geo", "eu-a", "eu-b"));
    assertEquals(List.of("g-b1"), names(fellBack));
    assertEquals("eu-b", fellBack.getZone());
    // Asked for draining ones too, eu-a still has one.
    ResolveResponse withDraining =
        registryB.resolve(
            inZones("geo", "eu-a", "eu-b").toBuilder()
                .addStatuses("SERVING")
                .addStatuses("DRAINING")
                .build());
    assertEquals(List.of("g-a1"), names(withDraining));
    assertEquals("eu-a", withDraining.getZone());

    // Deregistered, then a new instance fills the zone again.
    assertEquals(
        Outcome.RELEASED,
        registry.deregister(deregister("geo", "g-a1", only.getToken())).getOutcome());
    assertEquals("eu-b", registryB.resolve(inZones("geo", "eu-a", "eu-b")).getZone());
    registeredIn("geo", "g-a2", "eu-a", null);
    ResolveResponse refilled = registryB.resolve(inZones("geo", "eu-a", "eu-b"));
    assertEquals(List.of("g-a2"), names(refilled));
    assertEquals("eu-a", refilled.getZone());
  }

  @Test
  void resolveByStatuses() {
    Instance d = registeredIn("jobs", "j-1", null, null);
    registeredIn("jobs", "j-2", null, null);
    registered(
        register("jobs", "j-3", "10.0.9.3:80", LONG_TTL).toBuilder().setStatus("STARTING").build());
    assertEquals(
        Outcome.UPDATED,
        registry.setStatus(setStatus("jobs", "j-1", d.getToken(), "DRAINING")).getOutcome());
    assertEquals(
        List.of("j-1", "j-3"),
        names(
            registryB.resolve(
                resolve("jobs").toBuilder()
                    .addStatuses("STARTING")
                    .addStatuses("DRAINING")
                    .build())));
    assertEquals(
        List.of("j-3"),
        names(registryB.resolve(resolve("jobs").toBuilder().addStatuses("STARTING").build())));
  }

  @Test
  void resolveNeverReturnsAReleasedOrExpiredInstance() {
    Instance stays = registered(register("cache", "c-stays", "10.0.5.1:6379", LONG_TTL));
    RegisterResponse registration =
        registry.register(register("cache", "c-expires", "10.0.5.2:6379", 2));
    assertEquals(Outcome.GRANTED, registration.getOutcome(), registration.toString());
    Instance expires = registration.getInstance();
    assertEquals(List.of("c-expires", "c-stays"), names(registryB.resolve(resolve("cache"))));

    // Nobody renews c-expires: once one node has applied its expiry, a linearizable resolve on
    // another node must not return it. A stale read on a follower that has not applied the
    // registration yet finds nothing either: only a view at or past the registration counts.
    await(
        "c-expires expired on " + a,
        Duration.ofSeconds(15),
        () -> {
          GetResponse seen = leases.get(staleGet("service/cache/c-expires"));
          return seen.getRevision() >= registration.getRevision() && !seen.getFound();
        });
    assertEquals(List.of("c-stays"), names(registryB.resolve(resolve("cache"))));
    for (String id : cluster.ids()) {
      assertEquals(
          List.of("c-stays"),
          names(ViewStubs.registry(cluster, id).resolve(resolve("cache"))),
          "on " + id);
    }
    // Its token no longer holds anything.
    assertEquals(
        Outcome.NOT_HELD,
        registry.deregister(deregister("cache", "c-expires", expires.getToken())).getOutcome());

    // The same for a deregistration: right after the reply, and after a node applied it.
    assertEquals(
        Outcome.RELEASED,
        registryB.deregister(deregister("cache", "c-stays", stays.getToken())).getOutcome());
    for (String id : cluster.ids()) {
      assertEquals(
          List.of(), names(ViewStubs.registry(cluster, id).resolve(resolve("cache"))), "on " + id);
    }
    await(
        "c-stays released on " + a,
        Duration.ofSeconds(10),
        () -> !leases.get(staleGet("service/cache/c-stays")).getFound());
    assertEquals(
        List.of(),
        names(registryB.resolve(resolve("cache").toBuilder().setAnyStatus(true).build())));
  }

  @Test
  void renewViaLeasesKeepsRegistrationAlive() {
    Instance instance = registered(register("queue", "q-1", "10.0.6.1:5672", 2));
    long token = instance.getToken();
    String name = "service/queue/q-1";
    long start = System.nanoTime();
    long[] lastRenew = {start};
    // Renew every 500 ms for twice the TTL: the instance outlives its first expiry.
    await(
        "two TTLs of renewals",
        Duration.ofSeconds(20),
        () -> {
          long now = System.nanoTime();
          if (now - lastRenew[0] >= Duration.ofMillis(500).toNanos()) {
            assertEquals(
                Outcome.RENEWED, leases.renew(renew(name, token)).getResults(0).getOutcome());
            lastRenew[0] = now;
          }
          return now - start >= Duration.ofSeconds(4).toNanos();
        });
    ResolveResponse resolved = registryB.resolve(resolve("queue"));
    assertEquals(List.of("q-1"), names(resolved));
    Instance now = resolved.getInstances(0);
    assertEquals(token, now.getToken(), "the same registration, not a new one");
    assertTrue(
        Timestamps.compare(now.getExpiresAt(), instance.getExpiresAt()) > 0, "the expiry moved on");
    assertEquals(
        Outcome.RELEASED, registry.deregister(deregister("queue", "q-1", token)).getOutcome());
  }

  @Test
  void anInstanceRegisteredInASessionEndsWithIt() {
    CreateSessionResponse created =
        leases.createSession(
            CreateSessionRequest.newBuilder().setHolder("api-7").setTtl(seconds(LONG_TTL)).build());
    assertEquals(Outcome.GRANTED, created.getOutcome());
    long session = created.getSession().getId();
    Instance instance =
        registered(
            RegisterRequest.newBuilder()
                .setService("sess")
                .setInstance("s-1")
                .setAddress("10.0.9.1:80")
                .setHolder("api-7")
                .setSession(session)
                .build());
    assertEquals(session, instance.getSession());
    assertEquals(seconds(LONG_TTL), instance.getTtl(), "the session's TTL");
    GetResponse got = leases.get(get("service/sess/s-1"));
    assertEquals(session, got.getLease().getSession());
    assertEquals(
        List.of(instance.toBuilder().clearExpiresAt().build()),
        registryB.resolve(resolve("sess")).getInstancesList().stream()
            .map(i -> i.toBuilder().clearExpiresAt().build())
            .toList(),
        "resolve names the session too");

    // Another holder's session is refused; so is a session that does not exist.
    RegisterResponse foreign =
        registry.register(
            RegisterRequest.newBuilder()
                .setService("sess")
                .setInstance("s-2")
                .setAddress("10.0.9.2:80")
                .setHolder("api-8")
                .setSession(session)
                .build());
    assertEquals(RejectReason.NO_SESSION, foreign.getRejection().getReason());

    assertEquals(
        Outcome.CLOSED,
        leases
            .closeSession(CloseSessionRequest.newBuilder().setSession(session).build())
            .getOutcome());
    assertFalse(
        leases.get(get("service/sess/s-1")).getFound(),
        "closing the session deregistered the instance");
    assertEquals(
        List.of(),
        names(registryB.resolve(resolve("sess").toBuilder().setAnyStatus(true).build())));
  }

  @Test
  void ttlOutsideTheBoundsIsRejectedWithTheBounds() {
    RegisterResponse r = registry.register(register("mail", "m-1", "10.0.7.1:25", 1));
    assertEquals(Outcome.REJECTED, r.getOutcome());
    assertEquals(RejectReason.TTL_OUT_OF_RANGE, r.getRejection().getReason());
    assertEquals(seconds(2), r.getRejection().getMinTtl());
    assertFalse(r.hasInstance());
    assertEquals(
        List.of(), names(registry.resolve(resolve("mail").toBuilder().setAnyStatus(true).build())));
  }

  @Test
  void badInput() {
    Instance held = registered(register("bad", "b-1", "10.0.8.1:80", LONG_TTL));
    long token = held.getToken();
    assertInvalid(
        leases, "service", () -> registry.register(register("", "b-2", "10.0.8.2:80", LONG_TTL)));
    assertInvalid(
        leases,
        "service",
        () -> registry.register(register("a/b", "b-2", "10.0.8.2:80", LONG_TTL)));
    assertInvalid(
        leases, "instance", () -> registry.register(register("bad", "", "10.0.8.2:80", LONG_TTL)));
    assertInvalid(
        leases,
        "instance",
        () -> registry.register(register("bad", "b/2", "10.0.8.2:80", LONG_TTL)));
    assertInvalid(
        leases,
        "instance",
        () -> registry.register(register("bad", "b\u00002", "10.0.8.2:80", LONG_TTL)));
    assertInvalid(
        leases,
        "instance",
        () -> registry.register(register("bad", "b-" + "x".repeat(600), "10.0.8.2:80", LONG_TTL)));
    assertInvalid(
        leases,
        "service",
        () -> registry.register(register("x".repeat(600), "b-2", "10.0.8.2:80", LONG_TTL)));
    assertInvalid(leases, "ttl", () -> registry.register(register("bad", "b-2", "10.0.8.2:80", 0)));
    assertInvalid(
        leases,
        "ttl",
        () ->
            registry.register(
                register("bad", "b-2", "10.0.8.2:80", LONG_TTL).toBuilder().setSession(7).build()));
    assertInvalid(
        leases,
        "session",
        () ->
            registry.register(
                register("bad", "b-2", "10.0.8.2:80", LONG_TTL).toBuilder()
                    .clearTtl()
                    .setSession(-1)
                    .build()));
    assertInvalid(
        leases,
        "address",
        () -> registry.register(register("bad", "b-2", "10.0.8.2:80\n", LONG_TTL)));
    assertInvalid(
        leases,
        "metadata",
        () ->
            registry.register(
                register("bad", "b-2", "10.0.8.2:80", LONG_TTL).toBuilder()
                    .putMetadata("", "v")
                    .build()));
    assertInvalid(
        leases,
        "holder",
        () ->
            registry.register(
                register("bad", "b-2", "10.0.8.2:80", LONG_TTL).toBuilder()
                    .setHolder("h\u0007")
                    .build()));
    assertInvalid(
        leases,
        "holder",
        () ->
            registry.register(register("s".repeat(200), "i".repeat(200), "10.0.8.2:80", LONG_TTL)));

    assertInvalid(leases, "instance", () -> registry.deregister(deregister("bad", "b/1", token)));
    assertInvalid(leases, "token", () -> registry.deregister(deregister("bad", "b-1", 0)));
    assertInvalid(
        leases, "token", () -> registry.deregister(deregister("bad", "b-1", 1_000_000_000L)));

    assertInvalid(leases, "status", () -> registry.setStatus(setStatus("bad", "b-1", token, "")));
    assertInvalid(
        leases,
        "status",
        () -> registry.setStatus(setStatus("bad", "b-1", token, "x".repeat(100))));
    assertInvalid(
        leases, "service", () -> registry.setStatus(setStatus("", "b-1", token, "DRAINING")));
    assertInvalid(
        leases, "token", () -> registry.setStatus(setStatus("bad", "b-1", -1, "DRAINING")));

    assertInvalid(leases, "service", () -> registry.resolve(resolve("")));
    assertInvalid(leases, "service", () -> registry.resolve(resolve("bad/b-1")));
    assertInvalid(leases, "zones[1]", () -> registry.resolve(inZones("bad", "eu-a", "")));
    assertInvalid(leases, "zones[2]", () -> registry.resolve(inZones("bad", "eu-a", "*", "eu-a")));
    assertInvalid(leases, "zones[0]", () -> registry.resolve(inZones("bad", "eu\u0001")));
    assertInvalid(
        leases,
        "zones",
        () ->
            registry.resolve(
                inZones(
                    "bad", IntStream.range(0, 17).mapToObj(i -> "z" + i).toArray(String[]::new))));
    assertInvalid(
        leases,
        "statuses",
        () ->
            registry.resolve(
                resolve("bad").toBuilder().setAnyStatus(true).addStatuses("SERVING").build()));
    assertInvalid(
        leases,
        "statuses[1]",
        () ->
            registry.resolve(
                resolve("bad").toBuilder().addStatuses("SERVING").addStatuses("SERVING").build()));
    assertInvalid(
        leases,
        "statuses[0]",
        () -> registry.resolve(resolve("bad").toBuilder().addStatuses("x".repeat(100)).build()));
    assertInvalid(
        leases,
        "metadata",
        () -> registry.resolve(resolve("bad").toBuilder().putMetadata("", "v").build()));
    assertInvalid(
        leases,
        "metadata[k]",
        () -> registry.resolve(resolve("bad").toBuilder().putMetadata("k", "v\n").build()));

    ResolveResponse still = registry.resolve(resolve("bad"));
    assertEquals(
        List.of(held.toBuilder().clearExpiresAt().build()),
        still.getInstancesList().stream().map(i -> i.toBuilder().clearExpiresAt().build()).toList(),
        "still registered and SERVING");
  }
}
