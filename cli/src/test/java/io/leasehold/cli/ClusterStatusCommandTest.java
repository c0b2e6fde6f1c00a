package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static io.leasehold.cli.Cli.seconds;
import static io.leasehold.cli.Cli.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cluster status} and {@code cluster groups} on three nodes: every member, as it answers for
 * itself. The cluster forms with three lease groups beside the meta group, which {@code cluster
 * status} does not show.
 */
class ClusterStatusCommandTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster =
        TestCluster.start(
            3,
            dir,
            b ->
                b.electionTimeout(
                        java.time.Duration.ofMillis(1000), java.time.Duration.ofMillis(1900))
                    .leaseGroups(3));
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  static Cli.Run healthy(String... args) {
    List<String> all = new java.util.ArrayList<>(List.of("cluster", "status"));
    all.addAll(List.of(args));
    TestCluster.await(
        "every member healthy",
        seconds(30),
        () -> run(cluster, all.toArray(String[]::new)).exit() == 0);
    return run(cluster, all.toArray(String[]::new)).ok();
  }

  /** The lease group n1's placement table puts {@code ns} on, once it has one. */
  private static int leaseGroupOf(String ns) {
    return TestCluster.eventually(
        ns + " placed on a lease group",
        seconds(30),
        () ->
            cluster
                .node("n1")
                .stateMachine()
                .core()
                .placement(ns)
                .map(p -> p.getGroup())
                .filter(g -> g > 0));
  }

  /** Every member applies log format 6 or later and every group has a leader. */
  private static void awaitGroupsLed() {
    TestCluster.await(
        "every lease group led and format 6 applied",
        seconds(60),
        () ->
            cluster.running().stream()
                    .allMatch(
                        n ->
                            n.consensus().logFormat()
                                >= io.leasehold.statemachine.core.LogFormat.GROUPS)
                && StreamSupport.stream(
                        run(cluster, "cluster", "groups", "-o", "json").ok().array().spliterator(),
                        false)
                    .allMatch(g -> !g.getAsJsonObject().get("leader").isJsonNull()));
  }

  @Test
  void namespaceMoveTakesANamespaceToAnotherLeaseGroupWithItsLeases() {
    awaitGroupsLed();
    JsonObject held =
        run(cluster, "lease", "acquire", "reports/weekly", "--ttl", "2m", "-o", "json")
            .ok()
            .object();
    long token = held.get("token").getAsLong();
    int from = leaseGroupOf("reports");
    int to = from % 3 + 1;

    JsonObject moved =
        run(cluster, "namespace", "move", "reports", "--to", "" + to, "-o", "json").ok().object();
    assertEquals(to, moved.get("group").getAsInt(), moved::toString);
    assertEquals(2, moved.get("epoch").getAsInt(), moved::toString);
    JsonObject after = run(cluster, "lease", "get", "reports/weekly", "-o", "json").ok().object();
    assertEquals(token, after.get("token").getAsLong(), "the lease keeps its token: " + after);

    Cli.Run again = run(cluster, "namespace", "move", "reports", "--to", "" + to).ok();
    assertTrue(again.out().contains("reports"), again.out());
    Cli.Run nowhere = run(cluster, "namespace", "move", "reports", "--to", "9");
    assertEquals(2, nowhere.exit(), nowhere.toString());
    assertTrue(nowhere.err().contains("to_group"), nowhere.toString());
  }

  @Test
  void policyGetSaysWhichCopyOfThePoliciesTheNamespacesGroupHolds() {
    awaitGroupsLed();
    run(cluster, "lease", "acquire", "quota/first", "--ttl", "1m").ok();
    run(cluster, "policy", "set", "quota", "--max-ttl", "5m").ok();
    int group = leaseGroupOf("quota");
    // Answered once the group's leader holds the policy; the answering node's replica follows.
    JsonObject got =
        TestCluster.eventually(
            "quota's group holds the newest copy on the answering node",
            seconds(30),
            () -> {
              JsonObject p = run(cluster, "policy", "get", "quota", "-o", "json").ok().object();
              JsonArray copies = p.getAsJsonArray("copies");
              return copies.size() == 1
                      && copies.get(0).getAsJsonObject().get("current").getAsBoolean()
                  ? java.util.Optional.of(p)
                  : java.util.Optional.empty();
            });
    JsonObject copy = got.getAsJsonArray("copies").get(0).getAsJsonObject();
    assertEquals(group, copy.get("group").getAsInt(), got::toString);
    assertEquals(got.get("globalVersion").getAsLong(), copy.get("globalVersion").getAsLong());
    assertTrue(
        got.get("globalVersion").getAsLong() >= got.get("revision").getAsLong(),
        "the copy holds the policy: " + got);
    String table = run(cluster, "policy", "get", "quota").ok().out();
    assertTrue(table.contains("in force in group " + group + " (copy "), table);
  }

  @Test
  void groupsListsTheMetaGroupAndEachLeaseGroupLedByTheMemberItsPriorityNames() {
    TestCluster.await(
        "lease group k led by n<k>",
        seconds(60),
        () -> {
          JsonArray groups = run(cluster, "cluster", "groups", "-o", "json").ok().array();
          for (int k = 1; k <= 3; k++) {
            JsonObject g = groups.get(k).getAsJsonObject();
            if (g.get("leader").isJsonNull() || !str(g, "leader").equals("n" + k)) {
              return false;
            }
          }
          return !groups.get(0).getAsJsonObject().get("leader").isJsonNull();
        });
    // A first write places its namespace on a lease group, which then lists it.
    TestCluster.await(
        "the meta group applies log format 6",
        seconds(60),
        () ->
            cluster.running().stream()
                .allMatch(
                    n ->
                        n.consensus().logFormat()
                            >= io.leasehold.statemachine.core.LogFormat.GROUPS));
    run(cluster, "lease", "acquire", "jobs/nightly", "--ttl", "2m").ok();
    TestCluster.await(
        "jobs is listed on a lease group",
        seconds(30),
        () ->
            StreamSupport.stream(
                    run(cluster, "cluster", "groups", "-o", "json").ok().array().spliterator(),
                    false)
                .anyMatch(
                    g ->
                        g.getAsJsonObject().get("number").getAsInt() > 0
                            && g.getAsJsonObject()
                                .getAsJsonArray("namespaces")
                                .toString()
                                .equals("[\"jobs\"]")));
    JsonArray groups = run(cluster, "cluster", "groups", "-o", "json").ok().array();
    assertEquals(4, groups.size());
    JsonObject meta = groups.get(0).getAsJsonObject();
    assertEquals(
        List.of(
            "number", "kind", "groupId", "leader", "term", "commitIndex", "namespaces", "members"),
        List.copyOf(meta.keySet()),
        "the JSON shape is stable");
    assertEquals(0, meta.get("number").getAsInt());
    assertEquals("meta", str(meta, "kind"));
    JsonObject two = groups.get(2).getAsJsonObject();
    assertEquals("lease", str(two, "kind"));
    JsonArray members = two.getAsJsonArray("members");
    assertEquals(3, members.size());
    JsonObject n2 = members.get(1).getAsJsonObject();
    assertEquals("n2", str(n2, "id"));
    assertEquals(1, n2.get("priority").getAsInt());
    assertEquals(0, members.get(0).getAsJsonObject().get("priority").getAsInt());
    assertEquals(
        List.of("id", "priority", "role", "appliedIndex", "globalVersion"),
        List.copyOf(n2.keySet()));
    assertTrue(
        meta.getAsJsonArray("members").get(0).getAsJsonObject().get("globalVersion").getAsLong()
            > 0,
        "the meta group's global state has a version from format 6 on: " + meta);

    String table = run(cluster, "cluster", "groups").ok().out();
    List<List<String>> rows = Cli.cells(table);
    assertEquals(
        List.of("GROUP", "KIND", "LEADER", "TERM", "COMMIT", "MEMBERS (PRIORITY)", "NAMESPACES"),
        rows.get(0));
    assertEquals(List.of("1", "lease", "n1"), rows.get(2).subList(0, 3));
    assertTrue(table.contains("n1(1) n2(0) n3(0)"), table);
    assertTrue(table.contains("groups led: n1 "), table);
    assertTrue(
        rows.stream().anyMatch(r -> r.get(1).equals("lease") && r.get(6).equals("jobs")), table);
    assertEquals("-", rows.get(1).get(6), "the meta group has no namespace placed on it");
  }

  @Test
  void jsonListsEveryMemberWithRoleTermIndexesLagAndHealth() {
    run(cluster, "lease", "acquire", "status/x", "--ttl", "30s", "-o", "json").ok();
    // The members' indexes are the meta group's; with lease groups the grant's revision may be a
    // lease group's, so wait for what the meta group had committed once the grant was answered.
    long granted =
        StreamSupport.stream(
                run(cluster, "cluster", "status", "-o", "json").array().spliterator(), false)
            .map(JsonElement::getAsJsonObject)
            .filter(m -> !m.get("commitIndex").isJsonNull())
            .mapToLong(m -> m.get("commitIndex").getAsLong())
            .max()
            .orElseThrow();
    TestCluster.await(
        "every member applied the grant",
        seconds(30),
        () ->
            StreamSupport.stream(
                    run(cluster, "cluster", "status", "-o", "json").array().spliterator(), false)
                .allMatch(
                    m ->
                        !m.getAsJsonObject().get("appliedIndex").isJsonNull()
                            && m.getAsJsonObject().get("appliedIndex").getAsLong() >= granted));
    JsonArray members = healthy("-o", "json").array();
    assertEquals(3, members.size());
    JsonObject n1 = members.get(0).getAsJsonObject();
    assertEquals(
        List.of(
            "id",
            "address",
            "peerAddress",
            "role",
            "term",
            "leader",
            "commitIndex",
            "appliedIndex",
            "lag",
            "healthy",
            "error"),
        List.copyOf(n1.keySet()));
    assertEquals(
        List.of("n1", "n2", "n3"),
        StreamSupport.stream(members.spliterator(), false)
            .map(m -> str(m.getAsJsonObject(), "id"))
            .toList());
    assertEquals(
        1,
        StreamSupport.stream(members.spliterator(), false)
            .filter(m -> "LEADER".equals(str(m.getAsJsonObject(), "role")))
            .count());
    assertEquals(cluster.node("n1").clientAddress(), str(n1, "address"));
    assertTrue(n1.get("commitIndex").getAsLong() >= granted);
    assertTrue(n1.get("lag").getAsLong() >= 0);
    assertTrue(n1.get("healthy").getAsBoolean());
  }

  @Test
  void tableHasAStableColumnSet() {
    String table = healthy().out();
    List<List<String>> cells = Cli.cells(table);
    assertEquals(
        List.of("ID", "ADDRESS", "ROLE", "TERM", "COMMIT", "APPLIED", "LAG", "HEALTHY"),
        cells.get(0));
    assertEquals(4, cells.size(), table);
    for (List<String> row : cells.subList(1, 4)) {
      assertTrue(row.get(0).matches("n[123]"), row.toString());
      assertTrue(row.get(1).matches("127\\.0\\.0\\.1:\\d+"), row.toString());
      assertTrue(row.get(2).matches("LEADER|FOLLOWER"), row.toString());
      assertTrue(
          row.get(3).matches("\\d+")
              && row.get(4).matches("\\d+")
              && row.get(5).matches("\\d+")
              && row.get(6).matches("\\d+"),
          row.toString());
      assertEquals("yes", row.get(7));
    }
    Cli.assertAligned(table);
    assertEquals(
        List.of(
            "ID",
            "ADDRESS",
            "ROLE",
            "TERM",
            "COMMIT",
            "APPLIED",
            "LAG",
            "HEALTHY",
            "PEER ADDRESS",
            "LEADER",
            "ERROR"),
        Cli.cells(healthy("-o", "wide").out()).get(0));
  }

  @Test
  void aStoppedMemberIsUnreachableAndTheStatusExitsOne() throws Exception {
    String follower = cluster.followers().get(0).id();
    String endpoints = Cli.endpoints(cluster);
    cluster.stopNode(follower);
    try {
      Cli.Run r =
          run("--endpoints", endpoints, "--timeout", "20s", "cluster", "status", "-o", "json");
      assertEquals(LeaseholdCommand.EXIT_FAILED, r.exit(), r.toString());
      JsonObject down =
          StreamSupport.stream(r.array().spliterator(), false)
              .map(e -> e.getAsJsonObject())
              .filter(m -> str(m, "id").equals(follower))
              .findFirst()
              .orElseThrow();
      assertEquals("UNREACHABLE", str(down, "role"));
      assertFalse(down.get("healthy").getAsBoolean());
      assertTrue(down.get("lag").isJsonNull());
      assertTrue(
          str(down, "error").contains("UNAVAILABLE") || str(down, "error").contains("DEADLINE"),
          down.toString());
    } finally {
      cluster.startNode(follower);
    }
  }
}
