package io.leasehold.server.ui;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JSON the dashboard reads, against a three-node cluster (one cluster for the whole class). */
class DashboardApiTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    cluster = TestCluster.start(3, dir, b -> b.metricsPort(0));
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static JsonObject ok(LeaseholdNode node, String path) {
    DashboardHttp.Reply r = DashboardHttp.get(node, path);
    assertEquals(200, r.status(), () -> path + ": " + r.body());
    return r.body();
  }

  private static Set<String> names(JsonObject page) {
    Set<String> names = new HashSet<>();
    for (JsonElement e : page.getAsJsonArray("leases")) {
      names.add(e.getAsJsonObject().get("name").getAsString());
    }
    return names;
  }

  private static JsonObject member(JsonObject page, String id) {
    for (JsonElement e : page.getAsJsonArray("members")) {
      if (e.getAsJsonObject().get("id").getAsString().equals(id)) {
        return e.getAsJsonObject();
      }
    }
    throw new AssertionError("no member " + id + " in " + page);
  }

  private static boolean allOk(JsonObject page) {
    for (JsonElement e : page.getAsJsonArray("members")) {
      if (!e.getAsJsonObject().get("health").getAsString().equals("OK")) {
        return false;
      }
    }
    return true;
  }

  @Test
  void everyNodesClusterPageShowsEveryMemberAsItReportsItself() {
    LeaseholdNode leader = cluster.awaitLeader();
    cluster.acquireMany(leader.id(), "cluster-page/", 3);
    for (LeaseholdNode node : cluster.running()) {
      JsonObject page =
          TestCluster.eventually(
              "every member OK on " + node.id() + "'s page",
              Duration.ofSeconds(15),
              () -> {
                JsonObject p = ok(node, "/ui/api/cluster");
                return allOk(p) ? java.util.Optional.of(p) : java.util.Optional.empty();
              });
      assertEquals(leader.id(), page.get("leaderId").getAsString());
      JsonArray members = page.getAsJsonArray("members");
      assertEquals(3, members.size(), page::toString);
      for (JsonElement e : members) {
        JsonObject m = e.getAsJsonObject();
        String id = m.get("id").getAsString();
        boolean leads = id.equals(leader.id());
        assertEquals(leads, m.get("leader").getAsBoolean(), m::toString);
        assertEquals(id.equals(node.id()), m.get("self").getAsBoolean(), m::toString);
        assertEquals(leads ? "LEADER" : "FOLLOWER", m.get("role").getAsString(), m::toString);
        assertEquals(page.get("term").getAsLong(), m.get("term").getAsLong(), m::toString);
        assertEquals(
            leader.id(), m.get("leaderId").getAsString(), () -> id + " names the leader: " + m);
        assertTrue(
            m.get("commitIndex").getAsLong() > 0 && m.get("appliedIndex").getAsLong() > 0,
            m::toString);
        assertTrue(m.get("lag").getAsLong() >= 0, m::toString);
        // Only the leader knows each follower's match index and last contact.
        assertEquals(
            node == leader && !leads, m.has("lastContactMillis"), () -> node.id() + ": " + m);
        if (node == leader && !leads) {
          assertTrue(m.get("matchIndex").getAsLong() > 0, m::toString);
        }
      }
    }
  }

  @Test
  void aStoppedMemberIsUnreachableOnEveryOtherNodesPage() throws IOException {
    LeaseholdNode leader = cluster.awaitLeader();
    List<LeaseholdNode> followers = cluster.followers();
    LeaseholdNode viewer = followers.get(0);
    String stopped = followers.get(1).id();
    cluster.stopNode(stopped);
    try {
      for (LeaseholdNode node : List.of(viewer, leader)) {
        JsonObject m =
            TestCluster.eventually(
                stopped + " UNREACHABLE on " + node.id() + "'s page",
                Duration.ofSeconds(15),
                () -> {
                  JsonObject s = member(ok(node, "/ui/api/cluster"), stopped);
                  return s.get("health").getAsString().equals("UNREACHABLE")
                      ? java.util.Optional.of(s)
                      : java.util.Optional.empty();
                });
        assertFalse(m.has("appliedIndex"), m::toString);
        JsonObject page = ok(node, "/ui/api/cluster");
        assertEquals("OK", member(page, leader.id()).get("health").getAsString(), page::toString);
        assertEquals("OK", member(page, viewer.id()).get("health").getAsString(), page::toString);
      }
      JsonObject fromFollower = member(ok(viewer, "/ui/api/cluster"), stopped);
      assertFalse(
          fromFollower.get("error").getAsString().isEmpty(),
          () -> "the page says why: " + fromFollower);
    } finally {
      cluster.startNode(stopped);
      cluster.awaitConverged();
    }
  }

  @Test
  void aLeaseAppearsThenItsEndingIsInItsHistory() {
    LeaseholdNode leader = cluster.awaitLeader();
    LeaseholdNode follower = cluster.followers().get(0);
    AcquireResponse a =
        cluster
            .leases(leader.id())
            .acquire(
                AcquireRequest.newBuilder()
                    .setName("ui/appears")
                    .setHolder("worker-7")
                    .setTtl(Requests.seconds(30))
                    .setAttributes(Attributes.newBuilder().putMetadata("zone", "a"))
                    .build());
    assertEquals(Outcome.GRANTED, a.getOutcome());
    JsonObject page = ok(follower, "/ui/api/leases?prefix=ui/appears");
    JsonObject lease = page.getAsJsonArray("leases").get(0).getAsJsonObject();
    assertEquals("worker-7", lease.get("holder").getAsString());
    assertEquals(a.getLease().getToken(), lease.get("token").getAsLong());
    assertEquals("ACTIVE", lease.get("state").getAsString());
    assertTrue(lease.has("remaining") && lease.has("ttl"), lease::toString);
    assertEquals(
        "a",
        lease.getAsJsonObject("attributes").getAsJsonObject("metadata").get("zone").getAsString());

    cluster.leases(leader.id()).release(Requests.release("ui/appears", a.getLease().getToken()));
    JsonObject after = ok(follower, "/ui/api/lease?name=ui/appears");
    assertFalse(after.get("found").getAsBoolean(), after::toString);
    JsonObject ended = after.getAsJsonArray("history").get(0).getAsJsonObject();
    assertEquals("worker-7", ended.get("holder").getAsString());
    assertEquals("REASON_RELEASED", ended.get("reason").getAsString());
    assertTrue(names(ok(follower, "/ui/api/leases?prefix=ui/appears")).isEmpty());
  }

  @Test
  void pagesWalkEveryLeaseOnceAndSearchByPrefixAndHolder() {
    cluster.acquireMany(cluster.awaitLeader().id(), "paged/", 25);
    LeaseholdNode node = cluster.running().get(0);
    Set<String> seen = new HashSet<>();
    String token = "";
    int pages = 0;
    do {
      JsonObject page =
          ok(
              node,
              "/ui/api/leases?prefix=paged/&limit=10"
                  + (token.isEmpty() ? "" : "&pageToken=" + token));
      Set<String> names = names(page);
      assertTrue(names.size() <= 10);
      names.forEach(n -> assertTrue(seen.add(n), "listed twice: " + n));
      token = page.has("nextPageToken") ? page.get("nextPageToken").getAsString() : "";
      pages++;
    } while (!token.isEmpty());
    assertEquals(25, seen.size());
    assertEquals(3, pages);
    assertEquals(
        Set.of("paged/3"), names(ok(node, "/ui/api/leases?prefix=paged/&holder=runner-3")));
    assertEquals(
        Set.of(
            "paged/1",
            "paged/10",
            "paged/11",
            "paged/12",
            "paged/13",
            "paged/14",
            "paged/15",
            "paged/16",
            "paged/17",
            "paged/18",
            "paged/19"),
        names(ok(node, "/ui/api/leases?prefix=paged/1")));
  }

  @Test
  void theEventTailDeliversToEveryTabThroughOneWatcher() throws Exception {
    LeaseholdNode node = cluster.followers().get(0);
    int before = node.watchHub().watchers();
    try (DashboardHttp.Stream all = new DashboardHttp.Stream(node, "/ui/api/events");
        DashboardHttp.Stream released =
            new DashboardHttp.Stream(node, "/ui/api/events?prefix=tail/&types=RELEASED")) {
      assertEquals(200, all.status);
      TestCluster.await(
          "both tabs subscribed", Duration.ofSeconds(10), () -> all.ready && released.ready);
      assertEquals(before + 1, node.watchHub().watchers(), "two tabs, one hub watcher");
      AcquireResponse a =
          cluster
              .leases(cluster.awaitLeader().id())
              .acquire(Requests.acquire("tail/one", "h1", 30));
      JsonObject acquired =
          all.next("tail/one", Duration.ofSeconds(10))
              .orElseThrow(() -> new AssertionError("no ACQUIRED event"));
      assertEquals("ACQUIRED", acquired.get("type").getAsString());
      cluster
          .leases(cluster.awaitLeader().id())
          .release(Requests.release("tail/one", a.getLease().getToken()));
      JsonObject ended =
          released
              .next("tail/one", Duration.ofSeconds(10))
              .orElseThrow(() -> new AssertionError("no RELEASED event"));
      assertEquals(
          "RELEASED", ended.get("type").getAsString(), "the filtered tab sees only releases");
      assertTrue(released.data.stream().noneMatch(d -> d.contains("ACQUIRED")));
    }
    TestCluster.await(
        "the hub watcher closes with the last tab",
        Duration.ofSeconds(10),
        () -> node.watchHub().watchers() == before);
  }

  @Test
  void routesServicesAndPartitionsAreListed() {
    String leader = cluster.awaitLeader().id();
    cluster
        .registry(leader)
        .register(
            RegisterRequest.newBuilder()
                .setService("billing")
                .setInstance("i1")
                .setAddress("10.0.0.1:80")
                .setTtl(Requests.seconds(30))
                .build());
    cluster.leases(leader).acquire(Requests.acquire("jobs/workers/p/7", "worker-a", 30));
    LeaseholdNode node = cluster.running().get(0);
    JsonObject routes = ok(node, "/ui/api/routes?prefix=service/billing/");
    assertEquals(
        "10.0.0.1:80",
        routes.getAsJsonArray("routes").get(0).getAsJsonObject().get("address").getAsString());
    cluster
        .registry(leader)
        .register(
            RegisterRequest.newBuilder()
                .setService("billing")
                .setInstance("i2")
                .setAddress("10.0.0.2:80")
                .putMetadata("zone", "eu-1b")
                .setTtl(Requests.seconds(30))
                .build());
    JsonObject services = ok(node, "/ui/api/services");
    JsonObject billing = services.getAsJsonArray("services").get(0).getAsJsonObject();
    assertEquals("billing", billing.get("service").getAsString());
    assertEquals(
        "SERVING",
        billing.getAsJsonArray("instances").get(0).getAsJsonObject().get("status").getAsString());
    assertEquals(2, billing.getAsJsonArray("instances").size());
    assertEquals("[\"eu-1b\"]", services.getAsJsonArray("zones").toString());
    JsonObject inZone = ok(node, "/ui/api/services?zone=eu-1b");
    JsonArray zoned =
        inZone.getAsJsonArray("services").get(0).getAsJsonObject().getAsJsonArray("instances");
    assertEquals(1, zoned.size(), "only eu-1b's instance: " + inZone);
    assertEquals("i2", zoned.get(0).getAsJsonObject().get("instance").getAsString());
    assertEquals("eu-1b", zoned.get(0).getAsJsonObject().get("zone").getAsString());
    assertEquals(
        "[\"eu-1b\"]", inZone.getAsJsonArray("zones").toString(), "every zone, to choose from");
    JsonArray partitions =
        ok(node, "/ui/api/partitions?group=jobs/workers").getAsJsonArray("partitions");
    assertEquals(256, partitions.size());
    assertEquals("worker-a", partitions.get(7).getAsJsonObject().get("holder").getAsString());
    assertFalse(partitions.get(8).getAsJsonObject().has("holder"));
  }

  @Test
  void ratesAndPagesAreServed() {
    LeaseholdNode node = cluster.running().get(0);
    TestCluster.await(
        "a rate sample",
        Duration.ofSeconds(10),
        () -> ok(node, "/ui/api/rates").getAsJsonArray("at").size() > 0);
    JsonObject rates = ok(node, "/ui/api/rates");
    for (String series :
        new String[] {
          "acquired",
          "renewed",
          "expired",
          "lateHeartbeats",
          "watchers",
          "commitMillis",
          "applyMillis"
        }) {
      assertEquals(rates.getAsJsonArray("at").size(), rates.getAsJsonArray(series).size(), series);
    }
    for (String path :
        new String[] {
          "/ui/", "/ui/app.js", "/ui/app.css", "/ui/vendor/alpine.min.js", "/ui/vendor/uPlot.min.js"
        }) {
      assertEquals(200, TestCluster.httpGet(node, path).statusCode(), path);
    }
  }

  @Test
  void badParametersGetA400NamingTheParameterAndTheRule() {
    LeaseholdNode node = cluster.running().get(0);
    String[][] cases = {
      {"/ui/api/leases?limit=0", "limit", "from 1 to 1000"},
      {"/ui/api/leases?limit=5000", "limit", "from 1 to 1000"},
      {"/ui/api/leases?limit=ten", "limit", "whole number"},
      {"/ui/api/leases?prefx=a", "prefx", "not a parameter"},
      {"/ui/api/leases?stale=maybe", "stale", "true or false"},
      {"/ui/api/lease", "name", "required"},
      {"/ui/api/partitions?group=solo", "group", "<namespace>/<group>"},
      {"/ui/api/events?types=RENEWED", "types", "renewals are not tailed"},
      {"/ui/api/services?service=a/b", "service", "no '/'"},
      {"/ui/api/services?zone=a,a", "zone[1]", "already given"},
      {"/ui/api/services?zone=a,", "zone[1]", "must not be empty"},
    };
    for (String[] c : cases) {
      DashboardHttp.Reply r = DashboardHttp.get(node, c[0]);
      assertEquals(400, r.status(), c[0]);
      assertEquals(c[1], r.body().get("parameter").getAsString(), c[0]);
      assertTrue(r.body().get("error").getAsString().contains(c[2]), () -> c[0] + ": " + r.body());
    }
    assertEquals(404, DashboardHttp.get(node, "/ui/api/nothing").status());
  }
}
