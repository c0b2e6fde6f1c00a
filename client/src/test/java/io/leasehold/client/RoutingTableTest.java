package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.Partitions;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The routing table in memory: what it holds, lookups without the network, listeners. */
class RoutingTableTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = Fixtures.threeNodes(dir);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  @Test
  void aTableLoadsTheRoutesThatExistAndFollowsEveryChange() throws Exception {
    try (LeaseholdClient runner = Fixtures.client(cluster);
        LeaseholdClient proxy = Fixtures.client(cluster)) {
      Lease before =
          runner
              .blocking()
              .acquire("mailbox/before", ttl(30).withAddress("10.0.0.1:80").withMetadata("v", "1"));
      runner.blocking().acquire("mailbox/no-address", ttl(30));
      RoutingTable table = proxy.blocking().routingTable("mailbox/");
      List<RouteChange> changes = new CopyOnWriteArrayList<>();
      table.addListener(changes::add);
      Route r = table.lookup("mailbox/before").orElseThrow();
      assertEquals(
          new Route(
              "mailbox/before",
              runner.holder(),
              "10.0.0.1:80",
              before.token(),
              Partitions.of("mailbox/before"),
              Map.of("v", "1"),
              Optional.empty()),
          r);
      assertTrue(
          table.lookup("mailbox/no-address").isEmpty(),
          "a lease without an address is not a route");

      Lease moving =
          runner.blocking().acquire("mailbox/moving", ttl(30).withAddress("10.0.0.2:80"));
      moving.update(AttributeUpdate.address("10.0.0.3:80")).get(10, TimeUnit.SECONDS);
      moving.update(AttributeUpdate.address("")).get(10, TimeUnit.SECONDS);
      before.release().get();
      // A linearizable read after the changes: its revision covers them all.
      table.awaitRevision(runner.blocking().list("mailbox/").revision()).get(10, TimeUnit.SECONDS);

      assertTrue(
          table.lookup("mailbox/moving").isEmpty(),
          "an update that removes the address removes the route");
      assertTrue(table.lookup("mailbox/before").isEmpty(), "a released lease is no longer a route");
      Fixtures.await(
          "every change reached the listener", Duration.ofSeconds(5), () -> changes.size() == 4);
      assertEquals(
          List.of("mailbox/moving", "mailbox/moving", "mailbox/moving", "mailbox/before"),
          changes.stream().map(RouteChange::name).toList());
      assertEquals("10.0.0.2:80", changes.get(0).current().orElseThrow().address());
      assertEquals("10.0.0.2:80", changes.get(1).previous().orElseThrow().address());
      assertEquals("10.0.0.3:80", changes.get(1).current().orElseThrow().address());
      assertTrue(changes.get(2).current().isEmpty());
      assertTrue(changes.get(3).current().isEmpty());
      assertTrue(changes.get(0).revision() < changes.get(3).revision());
      assertEquals(Map.of(), table.routes());
      table.close();
    }
  }

  @Test
  void aFilteredTableShowsThePassingRoutesAndHearsThemLeaveAndCome() throws Exception {
    try (LeaseholdClient runner = Fixtures.client(cluster);
        LeaseholdClient proxy = Fixtures.client(cluster)) {
      Registration a1 =
          runner.blocking().register("maps", "a-1", "10.0.3.1:80", Map.of("zone", "eu-a"));
      runner.blocking().register("maps", "b-1", "10.0.3.2:80", Map.of("zone", "eu-b"));
      runner
          .blocking()
          .register("maps", "a-old", "10.0.3.3:80", Map.of("zone", "eu-a", "version", "1"));
      RoutingTable table =
          proxy
              .blocking()
              .routingTable("service/maps/", ServiceFilter.serving().inZones("eu-a", "eu-c"));
      List<RouteChange> changes = new CopyOnWriteArrayList<>();
      table.addListener(changes::add);
      // A watch with the same filter, checked by the nodes: eu-b's instances never reach it.
      List<String> watched = new CopyOnWriteArrayList<>();
      Watch watch =
          proxy.watch(
              WatchOptions.of("service/maps/")
                  .withFromRevision(table.revision() + 1)
                  .withFilter(ServiceFilter.serving().inZones("eu-a", "eu-c")),
              e -> watched.add(e.type() + " " + e.name()));
      assertEquals(
          List.of("service/maps/a-1", "service/maps/a-old"),
          table.routes().keySet().stream().sorted().toList(),
          "only eu-a's SERVING instances");
      assertTrue(table.lookup("service/maps/b-1").isEmpty(), "eu-b's is not shown");

      // Draining leaves the table; a new instance in a listed zone comes; another zone's does not.
      a1.setStatus(Registration.DRAINING).get(10, TimeUnit.SECONDS);
      Registration c1 =
          runner.blocking().register("maps", "c-1", "10.0.3.4:80", Map.of("zone", "eu-c"));
      runner.blocking().register("maps", "b-2", "10.0.3.5:80", Map.of("zone", "eu-b"));
      table
          .awaitRevision(proxy.blocking().list("service/maps/").revision())
          .get(10, TimeUnit.SECONDS);
      assertEquals(
          List.of("service/maps/a-old", "service/maps/c-1"),
          table.routes().keySet().stream().sorted().toList());
      Fixtures.await("two changes heard", Duration.ofSeconds(10), () -> changes.size() == 2);
      assertEquals("service/maps/a-1", changes.get(0).name());
      assertTrue(changes.get(0).current().isEmpty(), "draining is a removal: " + changes.get(0));
      assertEquals("service/maps/c-1", changes.get(1).name());
      assertTrue(changes.get(1).previous().isEmpty() && changes.get(1).current().isPresent());

      a1.setStatus(Registration.SERVING).get(10, TimeUnit.SECONDS);
      Fixtures.await(
          "a-1 back once SERVING",
          Duration.ofSeconds(10),
          () -> table.lookup("service/maps/a-1").isPresent());

      // eu-c empties and fills again.
      c1.deregister().get(10, TimeUnit.SECONDS);
      Fixtures.await(
          "eu-c empty",
          Duration.ofSeconds(10),
          () -> table.routes().values().stream().noneMatch(r -> r.address().equals("10.0.3.4:80")));
      runner.blocking().register("maps", "c-2", "10.0.3.6:80", Map.of("zone", "eu-c"));
      Fixtures.await(
          "eu-c filled",
          Duration.ofSeconds(10),
          () -> table.lookup("service/maps/c-2").isPresent());
      Fixtures.await(
          () -> "the watch heard the same changes: " + watched,
          Duration.ofSeconds(10),
          () -> watched.size() >= 5);
      assertEquals(
          List.of(
              "UPDATED service/maps/a-1",
              "ACQUIRED service/maps/c-1",
              "UPDATED service/maps/a-1",
              "RELEASED service/maps/c-1",
              "ACQUIRED service/maps/c-2"),
          watched,
          "a-1 drains (it left the filter), c-1 comes, a-1 serves again, eu-c empties and fills");
      watch.close();
      RoutingTable v1 =
          proxy
              .blocking()
              .routingTable(
                  "service/maps/",
                  ServiceFilter.serving()
                      .withMetadata("version", "1")
                      .inZones(ServiceFilter.ANY_ZONE));
      assertEquals(List.of("service/maps/a-old"), List.copyOf(v1.routes().keySet()));
      v1.close();
      table.close();
    }
  }

  @Test
  void aTableAnswersWhichRoutesAHolderHoldsFromItsOwnIndex() throws Exception {
    try (LeaseholdClient seven = Fixtures.client(cluster, b -> b.holder("runner-7"));
        LeaseholdClient eight = Fixtures.client(cluster, b -> b.holder("runner-8"));
        LeaseholdClient proxy = Fixtures.client(cluster)) {
      Lease m1 = seven.blocking().acquire("box/m1", ttl(30).withAddress("10.0.2.1:80"));
      seven.blocking().acquire("box/m2", ttl(30));
      RoutingTable table = proxy.blocking().routingTable("box/");
      assertEquals(List.of("box/m1"), names(table.heldBy("runner-7")), "loaded from the listing");

      Lease m3 = seven.blocking().acquire("box/m3", ttl(30).withAddress("10.0.2.3:80"));
      Lease m4 = eight.blocking().acquire("box/m4", ttl(30).withAddress("10.0.2.4:80"));
      table.awaitRevision(proxy.blocking().list("box/").revision()).get(10, TimeUnit.SECONDS);
      assertEquals(List.of("box/m1", "box/m3"), names(table.heldBy("runner-7")));
      assertEquals(List.of("box/m4"), names(table.heldBy("runner-8")));
      assertEquals(List.of(), table.heldBy("runner-9"));
      assertEquals(
          names(table.heldBy("runner-7")),
          names(proxy.blocking().routesHeldBy("runner-7", "box/")),
          "the cluster's holder index agrees");

      // The name moves to the other runner; another route loses its address; one ends.
      m1.release().get(10, TimeUnit.SECONDS);
      eight.blocking().acquire("box/m1", ttl(30).withAddress("10.0.2.8:80"));
      m3.update(AttributeUpdate.address("")).get(10, TimeUnit.SECONDS);
      m4.release().get(10, TimeUnit.SECONDS);
      table.awaitRevision(proxy.blocking().list("box/").revision()).get(10, TimeUnit.SECONDS);
      assertEquals(List.of(), table.heldBy("runner-7"));
      assertEquals(List.of("box/m1"), names(table.heldBy("runner-8")));
      assertEquals("10.0.2.8:80", table.heldBy("runner-8").get(0).address());
      assertEquals(List.of("box/m1"), names(proxy.blocking().routesHeldBy("runner-8", "")));
      table.close();
    }
  }

  private static List<String> names(List<Route> routes) {
    return routes.stream().map(Route::name).toList();
  }

  @Test
  void theOwnerOfAPartitionIsWhoeverHoldsPartitionN() throws Exception {
    try (LeaseholdClient runner = Fixtures.client(cluster);
        LeaseholdClient proxy = Fixtures.client(cluster)) {
      RoutingTable table = proxy.blocking().routingTable();
      String key = "user-1234";
      int partition = Partitions.of(key);
      Lease owner =
          runner
              .blocking()
              .acquire(Partitions.leaseName(partition), ttl(30).withAddress("10.0.1.1:7000"));
      table
          .awaitRevision(runner.blocking().get(owner.name()).orElseThrow().modRevision())
          .get(10, TimeUnit.SECONDS);
      Route route = table.ownerOf(key).orElseThrow();
      assertEquals(runner.holder(), route.holder());
      assertEquals("10.0.1.1:7000", route.address());
      assertEquals(owner.token(), route.token());
      assertEquals(Partitions.leaseName(partition), route.name());
      assertEquals(route, table.owner(partition).orElseThrow());
      owner.release().get();
      table.awaitRevision(runner.blocking().list("").revision()).get(10, TimeUnit.SECONDS);
      assertTrue(table.owner(partition).isEmpty());
      table.close();
    }
  }
}
