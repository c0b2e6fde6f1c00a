package io.leasehold.server.api;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.release;
import static io.leasehold.server.Requests.seconds;
import static io.leasehold.server.api.ViewStubs.assertInvalid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.Partitions;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRoutesRequest;
import io.leasehold.proto.v1.ListRoutesResponse;
import io.leasehold.proto.v1.LookupRequest;
import io.leasehold.proto.v1.LookupResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.RegisterResponse;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.Route;
import io.leasehold.proto.v1.RoutingGrpc;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** The routing table on a one-node cluster: the leases that carry an address, as routes. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RoutingServiceTest {
  static final long LONG_TTL = 600;

  TestCluster cluster;
  RoutingGrpc.RoutingBlockingStub routing;
  RegistryGrpc.RegistryBlockingStub registry;
  LeasesGrpc.LeasesBlockingStub leases;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    cluster = TestCluster.start(1, dir);
    String id = cluster.ids().get(0);
    routing = ViewStubs.routing(cluster, id);
    registry = ViewStubs.registry(cluster, id);
    leases = cluster.leases(id);
  }

  @AfterAll
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private Lease acquired(String name, String holder, Attributes attributes) {
    AcquireRequest.Builder r = acquire(name, holder, LONG_TTL).toBuilder();
    if (attributes != null) {
      r.setAttributes(attributes);
    }
    AcquireResponse granted = leases.acquire(r.build());
    assertEquals(Outcome.GRANTED, granted.getOutcome(), name);
    return granted.getLease();
  }

  static Attributes address(String address) {
    return Attributes.newBuilder().setAddress(address).build();
  }

  static LookupRequest lookup(String name) {
    return LookupRequest.newBuilder().setName(name).build();
  }

  static ListRoutesRequest listRoutes(String prefix, int limit, String startAfter) {
    return ListRoutesRequest.newBuilder()
        .setPrefix(prefix)
        .setLimit(limit)
        .setStartAfter(startAfter)
        .build();
  }

  @Test
  void lookupFindsOnlyLeasesWithAnAddressAndComputesPartition() {
    Lease routed =
        acquired(
            "shard/users-17",
            "node-3",
            Attributes.newBuilder()
                .setAddress("10.1.0.3:7000")
                .putMetadata("dc", "fra")
                .setStatus("SERVING")
                .build());
    acquired("lock/no-address", "runner-1", null);
    acquired(
        "lock/status-only",
        "runner-2",
        Attributes.newBuilder().setStatus("SERVING").putMetadata("k", "v").build());

    LookupResponse found = routing.lookup(lookup("shard/users-17"));
    assertTrue(found.getFound());
    assertTrue(found.getRevision() >= routed.getModRevision(), "the read reflects the grant");
    assertEquals(
        Route.newBuilder()
            .setName("shard/users-17")
            .setHolder("node-3")
            .setAddress("10.1.0.3:7000")
            .setToken(routed.getToken())
            .setPartition(Partitions.of("shard/users-17"))
            .putMetadata("dc", "fra")
            .setStatus("SERVING")
            .build(),
        found.getRoute());
    assertTrue(found.getRoute().getPartition() < Partitions.COUNT);
    assertEquals(
        found.getRoute(),
        routing.lookup(lookup("shard/users-17").toBuilder().setStale(true).build()).getRoute());

    for (String name : List.of("lock/no-address", "lock/status-only", "shard/never-acquired")) {
      LookupResponse r = routing.lookup(lookup(name));
      assertFalse(r.getFound(), name);
      assertFalse(r.hasRoute(), name);
      assertTrue(r.getRevision() > 0, name);
    }

    // A registered instance is a route too; a released lease is not.
    RegisterResponse registered =
        registry.register(
            RegisterRequest.newBuilder()
                .setService("api")
                .setInstance("a-1")
                .setAddress("10.1.1.1:443")
                .setTtl(seconds(LONG_TTL))
                .build());
    LookupResponse instance = routing.lookup(lookup("service/api/a-1"));
    assertTrue(instance.getFound());
    assertEquals("10.1.1.1:443", instance.getRoute().getAddress());
    assertEquals(registered.getInstance().getToken(), instance.getRoute().getToken());
    assertEquals("api/a-1", instance.getRoute().getHolder());
    assertEquals(Partitions.of("service/api/a-1"), instance.getRoute().getPartition());
    assertEquals(
        Outcome.RELEASED,
        leases.release(release("shard/users-17", routed.getToken())).getOutcome());
    assertFalse(routing.lookup(lookup("shard/users-17")).getFound());
  }

  @Test
  void listRoutesSkipsLeasesWithoutAddressAndPages() {
    acquired("pg/a1", "h1", address("10.2.0.1:80"));
    acquired("pg/a2", "h2", null);
    acquired(
        "pg/a3",
        "h3",
        Attributes.newBuilder().setAddress("10.2.0.3:80").putMetadata("w", "3").build());
    acquired("pg/a4", "h4", address("10.2.0.4:80"));
    acquired("pg/a5", "h5", null);
    acquired("pg/a6", "h6", Attributes.newBuilder().setStatus("SERVING").build());
    acquired("pgx/a7", "h7", address("10.2.0.7:80"));

    ListRoutesResponse all = routing.listRoutes(listRoutes("pg/", 0, ""));
    assertEquals(
        List.of("pg/a1", "pg/a3", "pg/a4"),
        all.getRoutesList().stream().map(Route::getName).toList());
    assertFalse(all.getMore());
    for (Route r : all.getRoutesList()) {
      assertEquals(Partitions.of(r.getName()), r.getPartition(), r.getName());
      assertEquals("h" + r.getName().charAt(4), r.getHolder());
      assertFalse(r.getAddress().isEmpty());
    }
    assertEquals(Map.of("w", "3"), all.getRoutes(1).getMetadataMap());

    // Pages of two: the leases without an address neither count nor announce another page.
    List<String> paged = new ArrayList<>();
    List<Boolean> mores = new ArrayList<>();
    String startAfter = "";
    do {
      ListRoutesResponse page = routing.listRoutes(listRoutes("pg/", 2, startAfter));
      assertTrue(page.getRoutesCount() <= 2);
      assertTrue(page.getRevision() >= all.getRevision());
      page.getRoutesList().forEach(r -> paged.add(r.getName()));
      mores.add(page.getMore());
      startAfter =
          page.getRoutesCount() == 0
              ? startAfter
              : page.getRoutes(page.getRoutesCount() - 1).getName();
    } while (mores.get(mores.size() - 1) && mores.size() < 10);
    assertEquals(List.of("pg/a1", "pg/a3", "pg/a4"), paged);
    assertEquals(List.of(true, false), mores);

    ListRoutesResponse exact = routing.listRoutes(listRoutes("pg/", 3, ""));
    assertEquals(3, exact.getRoutesCount());
    assertFalse(exact.getMore(), "only leases without an address follow");
    assertEquals(
        all.getRoutesList(),
        routing
            .listRoutes(listRoutes("pg/", 0, "").toBuilder().setStale(true).build())
            .getRoutesList());
  }

  @Test
  void listRoutesByHolderReadsTheHolderIndex() {
    acquired("byh/m1", "runner-7", address("10.4.0.1:80"));
    acquired("byh/m2", "runner-8", address("10.4.0.2:80"));
    acquired("byh/m3", "runner-7", null);
    acquired("byh/m4", "runner-7", address("10.4.0.4:80"));
    acquired("other/m5", "runner-7", address("10.4.0.5:80"));

    ListRoutesResponse mine =
        routing.listRoutes(listRoutes("byh/", 0, "").toBuilder().setHolder("runner-7").build());
    assertEquals(
        List.of("byh/m1", "byh/m4"),
        mine.getRoutesList().stream().map(Route::getName).toList(),
        "runner-7's routes under the prefix: no route of another holder, no lease without an address");
    assertEquals(
        List.of("byh/m1", "byh/m4", "other/m5"),
        routing
            .listRoutes(listRoutes("", 0, "").toBuilder().setHolder("runner-7").build())
            .getRoutesList()
            .stream()
            .map(Route::getName)
            .toList());
    ListRoutesResponse first =
        routing.listRoutes(listRoutes("", 1, "").toBuilder().setHolder("runner-7").build());
    assertEquals(List.of("byh/m1"), first.getRoutesList().stream().map(Route::getName).toList());
    assertTrue(first.getMore());
    assertEquals(
        List.of("byh/m4"),
        routing
            .listRoutes(listRoutes("", 1, "byh/m1").toBuilder().setHolder("runner-7").build())
            .getRoutesList()
            .stream()
            .map(Route::getName)
            .toList());
    assertEquals(
        List.of(),
        routing
            .listRoutes(listRoutes("", 0, "").toBuilder().setHolder("nobody").build())
            .getRoutesList());
  }

  @Test
  void badInput() {
    acquired("bad/routed", "h", address("10.3.0.1:80"));
    assertInvalid(leases, "name", () -> routing.lookup(lookup("")));
    assertInvalid(leases, "name", () -> routing.lookup(lookup("no-namespace")));
    assertInvalid(leases, "name", () -> routing.lookup(lookup("bad/a\u0001")));
    assertInvalid(leases, "limit", () -> routing.listRoutes(listRoutes("bad/", -1, "")));
    assertInvalid(leases, "limit", () -> routing.listRoutes(listRoutes("bad/", 10_001, "")));
    assertInvalid(leases, "prefix", () -> routing.listRoutes(listRoutes("bad/\u0000", 0, "")));
    assertInvalid(
        leases, "start_after", () -> routing.listRoutes(listRoutes("bad/", 0, "x".repeat(600))));
    assertTrue(routing.lookup(lookup("bad/routed")).getFound(), "still routed");
  }
}
