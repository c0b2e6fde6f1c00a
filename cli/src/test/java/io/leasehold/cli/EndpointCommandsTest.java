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
import com.google.gson.JsonParser;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code endpoint health|status} (each node on its own) and {@code cluster status --watch}, on
 * three nodes.
 */
class EndpointCommandsTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(3, dir, TestCluster::steadyElections);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  static List<JsonObject> objects(JsonArray a) {
    return StreamSupport.stream(a.spliterator(), false).map(JsonElement::getAsJsonObject).toList();
  }

  /** {@code endpoint health} once every node is healthy (a fresh cluster may still be electing). */
  static Cli.Run healthy(String... args) {
    List<String> all = new ArrayList<>(List.of("endpoint", "health"));
    all.addAll(List.of(args));
    TestCluster.await(
        "every node healthy",
        seconds(30),
        () -> run(cluster, all.toArray(String[]::new)).exit() == 0);
    return run(cluster, all.toArray(String[]::new)).ok();
  }

  /** A line of {@code cluster status --watch -o json}: the members. */
  static List<JsonObject> members(String line) {
    return objects(JsonParser.parseString(line).getAsJsonArray());
  }

  /** What counts as a change of a member in the watch: all but its indexes. */
  static List<List<String>> change(String line) {
    return members(line).stream()
        .map(
            m ->
                List.of(
                    str(m, "id"),
                    str(m, "role"),
                    String.valueOf(m.get("term")),
                    String.valueOf(m.get("leader")),
                    String.valueOf(m.get("healthy")),
                    String.valueOf(m.get("error"))))
        .toList();
  }

  static String address(String id) {
    return cluster.node(id).clientAddress();
  }

  @Test
  void healthChecksEveryMemberOnItsOwnEvenFromOneEndpoint() {
    List<JsonObject> nodes = objects(healthy("-o", "json").array());
    assertEquals(
        List.of("endpoint", "id", "healthy", "tookMs", "error"),
        List.copyOf(nodes.get(0).keySet()),
        "the JSON shape is stable");
    assertEquals(List.of("n1", "n2", "n3"), nodes.stream().map(n -> str(n, "id")).toList());
    assertEquals(
        List.of(address("n1"), address("n2"), address("n3")),
        nodes.stream().map(n -> str(n, "endpoint")).toList());
    assertTrue(
        nodes.stream()
            .allMatch(
                n ->
                    n.get("healthy").getAsBoolean()
                        && n.get("error").isJsonNull()
                        && n.get("tookMs").getAsLong() >= 0),
        nodes.toString());

    // One endpoint is enough to find every member.
    List<JsonObject> fromOne =
        objects(run("--endpoints", address("n2"), "endpoint", "health", "-o", "json").ok().array());
    assertEquals(List.of("n1", "n2", "n3"), fromOne.stream().map(n -> str(n, "id")).toList());
    assertEquals(
        3,
        run("--endpoints", address("n2"), "endpoint", "health", "--cluster", "-o", "json")
            .ok()
            .array()
            .size(),
        "--cluster, as etcdctl takes it, is the default");
    // --only-endpoints: just that one.
    List<JsonObject> only =
        objects(
            run(
                    "--endpoints",
                    address("n2"),
                    "endpoint",
                    "health",
                    "--only-endpoints",
                    "-o",
                    "json")
                .ok()
                .array());
    assertEquals(List.of("n2"), only.stream().map(n -> str(n, "id")).toList());

    String table = healthy().out();
    List<List<String>> cells = Cli.cells(table);
    assertEquals(List.of("ENDPOINT", "ID", "HEALTHY", "TOOK", "ERROR"), cells.get(0));
    assertEquals(4, cells.size(), "a line per node: " + table);
    for (List<String> row : cells.subList(1, 4)) {
      assertTrue(
          row.get(0).matches("127\\.0\\.0\\.1:\\d+")
              && row.get(1).matches("n[123]")
              && row.get(2).equals("yes")
              && row.get(3).matches("\\d+(\\.\\d)?m?s")
              && row.get(4).equals("-"),
          row.toString());
    }
    Cli.assertAligned(table);
  }

  @Test
  void statusShowsEachNodesRoleTermLeaderAndIndexes() {
    healthy();
    List<JsonObject> nodes = objects(run(cluster, "endpoint", "status", "-o", "json").ok().array());
    assertEquals(
        List.of(
            "endpoint",
            "id",
            "role",
            "term",
            "leader",
            "leaderAddress",
            "commitIndex",
            "appliedIndex",
            "members",
            "tookMs",
            "error"),
        List.copyOf(nodes.get(0).keySet()),
        "the JSON shape is stable");
    assertEquals(List.of("n1", "n2", "n3"), nodes.stream().map(n -> str(n, "id")).toList());
    List<JsonObject> leaders = nodes.stream().filter(n -> "LEADER".equals(str(n, "role"))).toList();
    assertEquals(1, leaders.size(), nodes.toString());
    String leader = str(leaders.get(0), "id");
    for (JsonObject n : nodes) {
      assertEquals(leader, str(n, "leader"), n.toString());
      assertEquals(address(leader), str(n, "leaderAddress"), n.toString());
      assertEquals(leaders.get(0).get("term").getAsLong(), n.get("term").getAsLong(), n.toString());
      assertTrue(
          n.get("appliedIndex").getAsLong() > 0
              && n.get("commitIndex").getAsLong() >= n.get("appliedIndex").getAsLong(),
          n.toString());
      assertEquals(3, n.getAsJsonArray("members").size());
      assertTrue(n.get("error").isJsonNull());
    }

    String table = run(cluster, "endpoint", "status").ok().out();
    assertEquals(
        List.of("ENDPOINT", "ID", "ROLE", "TERM", "LEADER", "COMMIT", "APPLIED"),
        Cli.cells(table).get(0));
    assertEquals(4, table.lines().count(), table);
    Cli.assertAligned(table);
    assertEquals(
        List.of(
            "ENDPOINT",
            "ID",
            "ROLE",
            "TERM",
            "LEADER",
            "COMMIT",
            "APPLIED",
            "LEADER ADDRESS",
            "MEMBERS",
            "TOOK",
            "ERROR"),
        Cli.cells(run(cluster, "endpoint", "status", "-o", "wide").ok().out()).get(0));
  }

  @Test
  void aStoppedNodeIsUnhealthyAndUnreachableAndTheExitCodeSaysSo() throws Exception {
    healthy();
    String follower = cluster.followers().get(0).id();
    String endpoints = Cli.endpoints(cluster);
    Cli.Background watch =
        new Cli.Background(
            Cli.at(cluster, "cluster", "status", "--watch", "--interval", "200ms", "-o", "json"));
    TestCluster.await(
        () -> "every member healthy in the watch: " + watch.out(),
        seconds(30),
        () ->
            watch
                .out()
                .lines()
                .anyMatch(l -> members(l).stream().allMatch(m -> m.get("healthy").getAsBoolean())));
    cluster.stopNode(follower);
    try {
      Cli.Run health =
          run("--endpoints", endpoints, "--timeout", "20s", "endpoint", "health", "-o", "json");
      assertEquals(LeaseholdCommand.EXIT_FAILED, health.exit(), health.toString());
      JsonObject down =
          objects(health.array()).stream()
              .filter(n -> follower.equals(str(n, "id")))
              .findFirst()
              .orElseThrow();
      assertFalse(down.get("healthy").getAsBoolean());
      assertTrue(
          str(down, "error").contains("UNAVAILABLE") || str(down, "error").contains("DEADLINE"),
          down.toString());
      assertEquals(
          2,
          objects(health.array()).stream().filter(n -> n.get("healthy").getAsBoolean()).count(),
          "the others answer: " + health);

      Cli.Run status = run("--endpoints", endpoints, "--timeout", "20s", "endpoint", "status");
      assertEquals(LeaseholdCommand.EXIT_FAILED, status.exit(), status.toString());
      List<String> row =
          Cli.cells(status.out()).stream()
              .filter(r -> r.get(1).equals(follower))
              .findFirst()
              .orElseThrow();
      assertEquals(List.of("UNREACHABLE", "-", "-", "-", "-"), row.subList(2, 7), status.out());

      TestCluster.await(
          () -> "the watch shows " + follower + " unreachable: " + watch.out(),
          seconds(30),
          () ->
              watch
                  .out()
                  .lines()
                  .anyMatch(
                      l -> l.contains("\"id\":\"" + follower + "\"") && l.contains("UNREACHABLE")));
    } finally {
      cluster.startNode(follower);
    }
    TestCluster.await(
        () -> "the watch shows every member healthy again: " + watch.out(),
        seconds(60),
        () -> {
          List<String> lines = watch.out().lines().toList();
          String last = lines.get(lines.size() - 1);
          return !last.contains("UNREACHABLE") && !last.contains("\"healthy\":false");
        });
    watch.interrupt();
    assertEquals(0, watch.awaitExit(seconds(30)), watch.err());
    List<String> lines = watch.out().lines().toList();
    for (int i = 1; i < lines.size(); i++) {
      assertFalse(
          change(lines.get(i)).equals(change(lines.get(i - 1))),
          "a line only when a member changed: " + watch.out());
    }
    healthy();
  }

  @Test
  void noNodeAnsweringExitsThreeWithALineForEachEndpoint() throws Exception {
    int[] closed = TestCluster.freePorts(2);
    String a = "127.0.0.1:" + closed[0];
    String b = "127.0.0.1:" + closed[1];
    Cli.Run health =
        run("--endpoints", a + "," + b, "--timeout", "2s", "endpoint", "health", "-o", "json");
    assertEquals(LeaseholdCommand.EXIT_UNREACHABLE, health.exit(), health.toString());
    assertEquals(
        List.of(a, b), objects(health.array()).stream().map(n -> str(n, "endpoint")).toList());
    assertTrue(
        objects(health.array()).stream()
            .allMatch(n -> !n.get("healthy").getAsBoolean() && str(n, "error") != null),
        health.out());
    assertEquals(1, health.err().strip().lines().count(), health.err());
    assertTrue(
        health
            .err()
            .startsWith(
                "leasehold endpoint health: no node answered (asked "
                    + a
                    + ", "
                    + b
                    + ", each once for at most 2s)"),
        health.err());

    Cli.Run status =
        run("--endpoints", a, "--timeout", "2s", "endpoint", "status", "--only-endpoints");
    assertEquals(LeaseholdCommand.EXIT_UNREACHABLE, status.exit(), status.toString());
    assertEquals(List.of(a, "-", "UNREACHABLE"), Cli.cells(status.out()).get(1).subList(0, 3));

    run("--endpoints", a, "--timeout", "2s", "cluster", "status", "--watch")
        .failed(LeaseholdCommand.EXIT_UNREACHABLE, "cluster unreachable");
  }

  @Test
  void badInputIsAUsageError() {
    run(cluster, "endpoint")
        .failed(LeaseholdCommand.EXIT_USAGE, "a subcommand is required: health or status");
    run(cluster, "endpoint", "ping").failed(LeaseholdCommand.EXIT_USAGE, "unknown command 'ping'");
    run(cluster, "endpoint", "health", "--cluster", "--only-endpoints")
        .failed(LeaseholdCommand.EXIT_USAGE, "--cluster, --only-endpoints: choose one");
    run("--endpoints", "no-port", "endpoint", "status")
        .failed(LeaseholdCommand.EXIT_USAGE, "--endpoints: 'no-port' is not host:port");
    run(cluster, "cluster", "status", "--interval", "1s")
        .failed(LeaseholdCommand.EXIT_USAGE, "--interval: only with --watch");
    run(cluster, "cluster", "status", "--watch", "--interval", "0s")
        .failed(LeaseholdCommand.EXIT_USAGE, "--interval: must be positive");
  }
}
