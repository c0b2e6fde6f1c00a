package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.Partitions;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Routing tables through node failures and history compaction. */
class RoutingTableFailoverTest {
  @TempDir Path dir;
  TestCluster cluster;
  final List<AutoCloseable> closeables = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closeables) {
      c.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private LeaseholdClient client(
      List<String> endpoints, UnaryOperator<LeaseholdClientBuilder> tweak) {
    LeaseholdClient c = Fixtures.client(endpoints, tweak);
    closeables.add(0, c);
    return c;
  }

  @Test
  void tablesOnClientsOfDifferentNodesConvergeAfterARandomWorkloadWithALeaderKill()
      throws Exception {
    cluster = Fixtures.stableThreeNodes(dir);
    LeaseholdNode leader = cluster.awaitLeader();
    // One proxy per node: each reads and watches through its own node, one of them the leader.
    List<RoutingTable> tables = new ArrayList<>();
    for (String id : cluster.ids()) {
      LeaseholdClient proxy = client(Fixtures.endpoints(cluster, id), b -> b);
      RoutingTable t = proxy.blocking().routingTable();
      closeables.add(0, t);
      tables.add(t);
    }
    String follower = cluster.followers().get(0).id();
    LeaseholdClient runner = client(Fixtures.endpoints(cluster, follower), b -> b);
    // Leases that will expire: their client goes away without releasing them.
    LeaseholdClient doomed =
        client(Fixtures.endpoints(cluster, follower), b -> b.releaseOnClose(false));
    Random random = new Random(42);
    Map<String, Lease> held = new HashMap<>();

    workload(random, runner, doomed, held, 60);
    cluster.stopNode(leader.id());
    workload(random, runner, doomed, held, 60);
    doomed.close();
    Fixtures.await(
        "the abandoned leases expired",
        Duration.ofSeconds(20),
        () -> runner.blocking().list("temp/").leases().isEmpty());

    LeaseListing truth = runner.blocking().list("");
    Map<String, Route> expected = new HashMap<>();
    for (LeaseInfo l : truth.leases()) {
      l.attributes()
          .address()
          .ifPresent(
              address ->
                  expected.put(
                      l.name(),
                      new Route(
                          l.name(),
                          l.holder(),
                          address,
                          l.token(),
                          Partitions.of(l.name()),
                          l.attributes().metadata(),
                          l.attributes().status())));
    }
    assertTrue(expected.size() >= 5, "the workload left routes: " + expected.size());
    assertTrue(truth.leases().size() > expected.size(), "and leases without an address");
    for (RoutingTable t : tables) {
      t.awaitRevision(truth.revision()).get(30, TimeUnit.SECONDS);
      assertEquals(expected, t.routes(), "every table converged to the cluster's routes");
    }
  }

  /**
   * Acquires, updates (address, status, metadata; adds and removes addresses) and releases at
   * random.
   */
  private static void workload(
      Random random,
      LeaseholdClient runner,
      LeaseholdClient doomed,
      Map<String, Lease> held,
      int ops)
      throws Exception {
    for (int i = 0; i < ops; i++) {
      String name =
          random.nextBoolean()
              ? "route/r-" + random.nextInt(12)
              : Partitions.leaseName(random.nextInt(8));
      Lease lease = held.get(name);
      if (random.nextInt(10) == 0) {
        doomed
            .blocking()
            .tryAcquire(
                "temp/t-" + i,
                LeaseOptions.defaults()
                    .withTtl(Duration.ofSeconds(2))
                    .withAddress("10.9.9." + i + ":80"));
      } else if (lease == null) {
        LeaseOptions options = LeaseOptions.defaults().withTtl(Duration.ofSeconds(30));
        if (random.nextInt(4) > 0) {
          options = options.withAddress("10.0.0." + random.nextInt(250) + ":80");
        }
        AcquireResult r = runner.blocking().tryAcquire(name, options);
        if (r instanceof Granted g) {
          held.put(name, g.lease());
        }
      } else {
        switch (random.nextInt(5)) {
          case 0 -> {
            lease.release().get(20, TimeUnit.SECONDS);
            held.remove(name);
          }
          case 1 -> lease.update(AttributeUpdate.address("")).get(20, TimeUnit.SECONDS);
          case 2 ->
              lease
                  .update(AttributeUpdate.status(random.nextBoolean() ? "SERVING" : "DRAINING"))
                  .get(20, TimeUnit.SECONDS);
          case 3 ->
              lease
                  .update(AttributeUpdate.metadata(Map.of("gen", Integer.toString(i))))
                  .get(20, TimeUnit.SECONDS);
          default ->
              lease
                  .update(AttributeUpdate.address("10.0.1." + random.nextInt(250) + ":80"))
                  .get(20, TimeUnit.SECONDS);
        }
      }
    }
  }

  @Test
  void aTableThatFellBehindTheHistoryListsAgainAndReportsTheDifference() throws Exception {
    cluster =
        TestCluster.start(
            3, dir, b -> TestCluster.steadyElections(b.history(50, Duration.ofHours(1))));
    Partition cut = new Partition();
    LeaseholdClient proxy = client(Fixtures.endpoints(cluster), b -> b.interceptor(cut));
    LeaseholdClient runner = client(Fixtures.endpoints(cluster), b -> b);
    Lease gone =
        runner
            .blocking()
            .acquire(
                "route/gone",
                LeaseOptions.defaults().withTtl(Duration.ofSeconds(60)).withAddress("10.0.0.1:80"));
    RoutingTable table = proxy.blocking().routingTable("route/");
    closeables.add(0, table);
    List<RouteChange> changes = new CopyOnWriteArrayList<>();
    table.addListener(changes::add);
    assertTrue(table.lookup("route/gone").isPresent());
    long seen = table.revision();

    cut.cut();
    gone.release().get();
    for (int i = 0; i < 120; i++) {
      runner
          .blocking()
          .tryAcquire(
              "route/new-" + i,
              LeaseOptions.defaults()
                  .withTtl(Duration.ofSeconds(60))
                  .withAddress("10.0.2." + (i % 250) + ":80"));
    }
    Fixtures.await(
        "the history was compacted past what the table saw",
        Duration.ofSeconds(30),
        () ->
            cluster.running().stream()
                .allMatch(n -> n.stateMachine().core().history().getCompactRevision() > seen + 1));
    cut.heal();

    LeaseListing truth = runner.blocking().list("route/");
    table.awaitRevision(truth.revision()).get(30, TimeUnit.SECONDS);
    assertFalse(table.lookup("route/gone").isPresent());
    assertEquals(120, table.routes().size());
    assertEquals("10.0.2.7:80", table.lookup("route/new-7").orElseThrow().address());
    Fixtures.await(
        () ->
            "the listener heard every difference, got "
                + changes.size()
                + ": "
                + changes.stream()
                    .map(c -> c.name() + (c.current().isPresent() ? "+" : "-") + "@" + c.revision())
                    .toList(),
        Duration.ofSeconds(5),
        () -> changes.size() == 121);
    assertTrue(
        changes.stream().anyMatch(c -> c.name().equals("route/gone") && c.current().isEmpty()));
  }
}
