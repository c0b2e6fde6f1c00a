package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static io.leasehold.cli.Cli.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code policy get|set|delete|list} and {@code ban add|remove|list}. */
class AdminCommandsTest {
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

  @Test
  void policySetReplacesGetShowsOwnAndEffectiveDeleteRestoresTheDefault() {
    JsonObject set =
        run(
                cluster,
                "policy",
                "set",
                "jobs",
                "--min-ttl",
                "5s",
                "--max-ttl",
                "1m",
                "--default-ttl",
                "20s",
                "--heartbeat",
                "2s",
                "--pattern",
                "[a-z-]+",
                "--grace",
                "500ms",
                "--lock-delay",
                "15s",
                "--max-per-holder",
                "3",
                "--max-per-namespace",
                "100",
                "--history-limit",
                "50",
                "-o",
                "json")
            .ok()
            .object();
    assertFalse(set.get("inherited").getAsBoolean());
    JsonObject own = set.getAsJsonObject("policy");
    assertEquals(
        List.of(
            "minTtlMs",
            "maxTtlMs",
            "defaultTtlMs",
            "heartbeatMs",
            "namePattern",
            "graceMs",
            "lockDelayMs",
            "maxLeasesPerHolder",
            "maxLeasesPerNamespace",
            "historyLimit"),
        List.copyOf(own.keySet()));
    assertEquals(5_000, own.get("minTtlMs").getAsLong());
    assertEquals(60_000, own.get("maxTtlMs").getAsLong());
    assertEquals(500, own.get("graceMs").getAsLong());
    assertEquals("[a-z-]+", str(own, "namePattern"));
    assertEquals(3, own.get("maxLeasesPerHolder").getAsLong());

    // The policy is in force: a TTL above its maximum is refused.
    run(cluster, "lease", "acquire", "jobs/nightly", "--ttl", "2m")
        .failed(LeaseholdCommand.EXIT_FAILED, "TTL_OUT_OF_RANGE");

    // Set again with one option: the rest go back to the built-in values.
    JsonObject replaced =
        run(cluster, "policy", "set", "jobs", "--max-ttl", "2m", "-o", "json").ok().object();
    assertTrue(replaced.getAsJsonObject("policy").get("minTtlMs").isJsonNull());
    assertEquals(
        2_000,
        replaced.getAsJsonObject("effective").get("minTtlMs").getAsLong(),
        "the built-in minimum");

    JsonArray all = run(cluster, "policy", "list", "-o", "json").ok().array();
    assertTrue(all.toString().contains("\"namespace\":\"jobs\""), all.toString());
    String table = run(cluster, "policy", "get", "jobs").ok().out();
    assertEquals(List.of("FIELD", "OWN", "EFFECTIVE"), Cli.cells(table).get(0));
    assertTrue(Cli.cells(table).contains(List.of("maxTtl", "2m", "2m")), table);
    assertFalse(
        table.contains("maxTtlMs"), "the table names the field as it shows the value: " + table);

    assertTrue(
        run(cluster, "policy", "delete", "jobs", "-o", "json")
            .ok()
            .object()
            .get("existed")
            .getAsBoolean());
    assertFalse(
        run(cluster, "policy", "delete", "jobs", "-o", "json")
            .ok()
            .object()
            .get("existed")
            .getAsBoolean());
    assertTrue(
        run(cluster, "policy", "get", "jobs", "-o", "json")
            .ok()
            .object()
            .get("inherited")
            .getAsBoolean());
  }

  @Test
  void anInvalidPolicyIsAUsageErrorNamingTheField() {
    run(cluster, "policy", "set", "bad", "--min-ttl", "1m", "--max-ttl", "10s")
        .failed(LeaseholdCommand.EXIT_USAGE, "ttl");
  }

  @Test
  void banEndsTheHoldersLeasesAndIsListedUntilRemoved() {
    run(cluster, "lease", "acquire", "ban/x", "--ttl", "30s", "--holder", "runaway").ok();
    JsonObject ban =
        run(
                cluster,
                "ban",
                "add",
                "runaway",
                "--reason",
                "runaway job",
                "--duration",
                "1h",
                "-o",
                "json")
            .ok()
            .object();
    assertEquals(1, ban.get("leasesEnded").getAsLong());
    assertFalse(ban.get("until").isJsonNull());
    run(cluster, "lease", "acquire", "ban/y", "--ttl", "30s", "--holder", "runaway")
        .failed(LeaseholdCommand.EXIT_FAILED, "BANNED");
    JsonArray bans = run(cluster, "ban", "list", "-o", "json").ok().array();
    assertEquals("runaway job", str(bans.get(0).getAsJsonObject(), "reason"));
    assertEquals(
        List.of("HOLDER", "REASON", "BANNED", "UNTIL", "LEASES ENDED"),
        Cli.cells(run(cluster, "ban", "list").ok().out()).get(0));
    assertEquals(
        "BANNED",
        str(
            run(cluster, "lease", "history", "ban/x", "-o", "json")
                .ok()
                .array()
                .get(0)
                .getAsJsonObject(),
            "reason"));

    assertTrue(
        run(cluster, "ban", "remove", "runaway", "-o", "json")
            .ok()
            .object()
            .get("wasBanned")
            .getAsBoolean());
    assertEquals(0, run(cluster, "ban", "list", "-o", "json").ok().array().size());
    run(cluster, "lease", "acquire", "ban/y", "--ttl", "30s", "--holder", "runaway").ok();
  }

  @Test
  void banAddStillTakesTheDeprecatedForAndSaysSo() {
    Cli.Run old =
        run(
            cluster,
            "ban",
            "add",
            "old-script",
            "--reason",
            "from a script",
            "--for",
            "10m",
            "-o",
            "json");
    assertEquals(0, old.exit(), old::toString);
    assertEquals("warning: --for is deprecated; use --duration", old.err().strip());
    assertFalse(old.object().get("until").isJsonNull(), "a timed ban, as --duration makes");
    run(
            cluster,
            "ban",
            "add",
            "old-script",
            "--reason",
            "both",
            "--for",
            "10m",
            "--duration",
            "10m")
        .failed(LeaseholdCommand.EXIT_USAGE, "give only --duration");
    String help = run(cluster, "ban", "add", "--help").out();
    assertTrue(help.contains("--duration") && !help.contains("--for"), help);
    run(cluster, "ban", "remove", "old-script").ok();
  }
}
