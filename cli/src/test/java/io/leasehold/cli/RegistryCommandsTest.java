package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static io.leasehold.cli.Cli.seconds;
import static io.leasehold.cli.Cli.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.leasehold.proto.Partitions;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code service list|resolve|register} and {@code route list|lookup|partition}. */
class RegistryCommandsTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(1, dir);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  static List<String> field(JsonArray a, String key) {
    return StreamSupport.stream(a.spliterator(), false)
        .map(e -> str(e.getAsJsonObject(), key))
        .toList();
  }

  @Test
  void registeredInstancesResolveAndServicesAreCounted() {
    JsonObject i1 =
        run(
                cluster,
                "service",
                "register",
                "payments",
                "i-1",
                "--address",
                "10.0.0.7:8443",
                "--meta",
                "zone=a",
                "--ttl",
                "30s",
                "-o",
                "json")
            .ok()
            .object();
    assertEquals("SERVING", str(i1, "status"));
    run(
            cluster,
            "service",
            "register",
            "payments",
            "i-2",
            "--address",
            "10.0.0.8:8443",
            "--status",
            "DRAINING",
            "--ttl",
            "30s")
        .ok();
    run(cluster, "service", "register", "orders", "i-1", "--address", "10.0.1.1:80", "--ttl", "30s")
        .ok();

    JsonArray serving = run(cluster, "service", "resolve", "payments", "-o", "json").ok().array();
    assertEquals(List.of("i-1"), field(serving, "instance"));
    assertEquals(
        "a",
        serving.get(0).getAsJsonObject().getAsJsonObject("metadata").get("zone").getAsString());
    assertEquals(
        List.of("i-1", "i-2"),
        field(
            run(cluster, "service", "resolve", "payments", "--all", "-o", "json").ok().array(),
            "instance"));

    // The class's other tests register services of their own on the same cluster.
    JsonArray services = new JsonArray();
    run(cluster, "service", "list", "-o", "json")
        .ok()
        .array()
        .forEach(
            e -> {
              if (List.of("orders", "payments").contains(str(e.getAsJsonObject(), "service"))) {
                services.add(e);
              }
            });
    assertEquals(List.of("orders", "payments"), field(services, "service"));
    assertEquals(2, services.get(1).getAsJsonObject().get("instances").getAsInt());
    assertEquals(1, services.get(1).getAsJsonObject().get("serving").getAsInt());

    run(
            cluster,
            "service",
            "register",
            "payments",
            "i-1",
            "--address",
            "10.9.9.9:1",
            "--ttl",
            "30s")
        .failed(LeaseholdCommand.EXIT_FAILED, "i-1");
  }

  private static void register(String service, String instance, String... meta) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "service",
                "register",
                service,
                instance,
                "--address",
                "10.0.2.1:80",
                "--ttl",
                "30s"));
    for (String m : meta) {
      args.add("--meta");
      args.add(m);
    }
    run(cluster, args.toArray(String[]::new)).ok();
  }

  @Test
  void resolveFiltersByZoneInOrderMetadataAndStatus() {
    register("inventory", "v-a1", "zone=eu-a", "version=2.3");
    register("inventory", "v-a2", "zone=eu-a", "version=2.2");
    register("inventory", "v-b1", "zone=eu-b", "version=2.3");

    assertEquals(
        List.of("v-a1", "v-a2"),
        field(
            run(
                    cluster,
                    "service",
                    "resolve",
                    "inventory",
                    "--zone",
                    "us-east,eu-a,*",
                    "-o",
                    "json")
                .ok()
                .array(),
            "instance"));
    assertEquals(
        List.of("v-b1"),
        field(
            run(
                    cluster,
                    "service",
                    "resolve",
                    "inventory",
                    "--zone",
                    "eu-b,eu-a",
                    "--meta",
                    "version=2.3",
                    "-o",
                    "json")
                .ok()
                .array(),
            "instance"));
    String table =
        run(cluster, "service", "resolve", "inventory", "--zone", "us-east,eu-b").ok().out();
    assertTrue(table.contains("v-b1") && !table.contains("v-a1"), table);
    assertTrue(table.contains("zone: eu-b"), table);
    String none = run(cluster, "service", "resolve", "inventory", "--zone", "us-east").ok().out();
    assertTrue(none.contains("zone: none of us-east has a matching instance"), none);
    assertEquals(
        List.of(),
        field(
            run(cluster, "service", "resolve", "inventory", "--status", "DRAINING", "-o", "json")
                .ok()
                .array(),
            "instance"));

    run(cluster, "service", "resolve", "inventory", "--zone", "eu-a,eu-a")
        .failed(LeaseholdCommand.EXIT_USAGE, "zones[1]");
    run(cluster, "service", "resolve", "inventory", "--all", "--status", "SERVING")
        .failed(LeaseholdCommand.EXIT_USAGE, "--status and --all");
  }

  @Test
  void resolvePrintsTheVersionAndWaitVersionWaitsForTheNextChange() throws Exception {
    register("catalog", "c-1");
    String table = run(cluster, "service", "resolve", "catalog").ok().out();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("version: (\\d+)").matcher(table);
    assertTrue(m.find(), table);
    long version = Long.parseLong(m.group(1));
    assertTrue(version > 0, table);

    Cli.Background waiting =
        new Cli.Background(
            Cli.at(
                cluster,
                "service",
                "resolve",
                "catalog",
                "--wait-version",
                Long.toString(version),
                "--wait",
                "50s",
                "-o",
                "json"));
    TestCluster.await(
        "the blocking resolve is held by a node",
        seconds(30),
        () -> cluster.running().stream().mapToInt(n -> n.waitingResolves()).sum() == 1);
    register("catalog", "c-2");
    assertEquals(0, waiting.awaitExit(seconds(30)), waiting.err());
    com.google.gson.JsonObject answer =
        com.google.gson.JsonParser.parseString(waiting.out()).getAsJsonObject();
    assertTrue(answer.get("version").getAsLong() > version, waiting.out());
    assertEquals(2, answer.getAsJsonArray("instances").size(), waiting.out());

    run(cluster, "service", "resolve", "catalog", "--wait", "5s")
        .failed(LeaseholdCommand.EXIT_USAGE, "--wait: only with --wait-version");
    run(cluster, "service", "resolve", "catalog", "--wait-version", "1", "--wait", "11m")
        .failed(LeaseholdCommand.EXIT_USAGE, "wait");
  }

  @Test
  void registerHoldKeepsTheInstanceUntilInterruptedThenDeregisters() throws Exception {
    Cli.Background hold =
        new Cli.Background(
            Cli.at(
                cluster,
                "service",
                "register",
                "held",
                "i-1",
                "--address",
                "10.0.0.1:1",
                "--ttl",
                "3s",
                "--hold"));
    hold.awaitErr("registered held/i-1", seconds(30));
    hold.interrupt();
    assertEquals(0, hold.awaitExit(seconds(30)), hold.err());
    assertEquals(
        List.of(),
        field(
            run(cluster, "service", "resolve", "held", "--all", "-o", "json").ok().array(),
            "instance"));
  }

  @Test
  void routesAreListedLookedUpAndFoundByPartition() {
    run(
            cluster,
            "lease",
            "acquire",
            "mailbox/alice",
            "--ttl",
            "30s",
            "--address",
            "10.0.2.1:9000",
            "--holder",
            "proxy-1")
        .ok();
    run(cluster, "lease", "acquire", "mailbox/no-address", "--ttl", "30s").ok();
    run(
            cluster,
            "lease",
            "acquire",
            "partition/42",
            "--ttl",
            "30s",
            "--address",
            "10.0.3.3:7000",
            "--holder",
            "owner-42")
        .ok();

    JsonArray routes =
        run(cluster, "route", "list", "--prefix", "mailbox/", "-o", "json").ok().array();
    assertEquals(List.of("mailbox/alice"), field(routes, "name"));
    assertEquals(
        List.of("partition/42"),
        field(
            run(cluster, "route", "list", "--holder", "owner-42", "-o", "json").ok().array(),
            "name"));
    assertEquals(
        List.of(),
        field(
            run(
                    cluster,
                    "route",
                    "list",
                    "--holder",
                    "owner-42",
                    "--prefix",
                    "mailbox/",
                    "-o",
                    "json")
                .ok()
                .array(),
            "name"));
    run(cluster, "route", "list", "--holder", "")
        .failed(LeaseholdCommand.EXIT_USAGE, "--holder: must not be empty");
    JsonObject alice = run(cluster, "route", "lookup", "mailbox/alice", "-o", "json").ok().object();
    assertEquals("10.0.2.1:9000", str(alice, "address"));
    assertEquals(Partitions.of("mailbox/alice"), alice.get("partition").getAsInt());
    run(cluster, "route", "lookup", "mailbox/no-address")
        .failed(LeaseholdCommand.EXIT_FAILED, "mailbox/no-address has no route");

    assertEquals(
        "owner-42",
        str(run(cluster, "route", "partition", "42", "-o", "json").ok().object(), "holder"));
    run(cluster, "route", "partition", "43")
        .failed(LeaseholdCommand.EXIT_FAILED, "partition 43 has no owner");
    run(cluster, "route", "partition", "256").failed(LeaseholdCommand.EXIT_USAGE, "must be 0-255");
    String key =
        "user-"
            + java.util.stream.IntStream.range(0, 10_000)
                .filter(i -> Partitions.of("user-" + i) == 42)
                .findFirst()
                .orElseThrow();
    assertEquals(
        "owner-42",
        str(
            run(cluster, "route", "partition", "--partition-key", key, "-o", "json").ok().object(),
            "holder"));
  }
}
