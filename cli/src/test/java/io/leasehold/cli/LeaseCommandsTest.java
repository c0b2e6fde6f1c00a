package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static io.leasehold.cli.Cli.seconds;
import static io.leasehold.cli.Cli.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
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

/** {@code lease list|get|acquire|release|revoke|history} against a real one-node cluster. */
class LeaseCommandsTest {
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

  static JsonObject acquire(String name, String holder, String... more) {
    List<String> args =
        new java.util.ArrayList<>(
            List.of("lease", "acquire", name, "--ttl", "30s", "--holder", holder, "-o", "json"));
    args.addAll(List.of(more));
    return run(cluster, args.toArray(String[]::new)).ok().object();
  }

  static List<String> names(JsonArray a) {
    return StreamSupport.stream(a.spliterator(), false)
        .map(e -> str(e.getAsJsonObject(), "name"))
        .toList();
  }

  @Test
  void acquirePrintsTheLeaseWithItsTokenAndGetShowsWhoHoldsItUntilWhen() {
    JsonObject acquired =
        acquire(
            "get/billing-job",
            "runner-1",
            "--address",
            "10.0.0.7:9000",
            "--meta",
            "zone=a",
            "--meta",
            "job=billing");
    long token = acquired.get("token").getAsLong();
    assertTrue(token > 0);
    assertEquals("runner-1", str(acquired, "holder"));
    assertEquals(30_000, acquired.get("ttlMs").getAsLong());

    JsonObject got = run(cluster, "lease", "get", "get/billing-job", "-o", "json").ok().object();
    assertEquals(
        List.of(
            "name",
            "holder",
            "token",
            "ttlMs",
            "state",
            "acquiredAt",
            "renewedAt",
            "expiresAt",
            "remainingMs",
            "renewCount",
            "heartbeatMs",
            "graceMs",
            "address",
            "status",
            "metadata",
            "modRevision",
            "session",
            "deadline",
            "deadlineRemainingMs",
            "deadlineSource",
            "extensions"),
        List.copyOf(got.keySet()),
        "the JSON shape is stable (fields are only added)");
    assertEquals(
        "leader",
        str(got, "deadlineSource"),
        "the node leads: it knows the deadline its expiry acts on");
    assertEquals(
        0, got.getAsJsonArray("extensions").size(), "granted by this leader: not extended");
    long toDeadline = got.get("deadlineRemainingMs").getAsLong();
    assertTrue(toDeadline > 0 && toDeadline <= 30_000, "expires in " + toDeadline);
    assertEquals(token, got.get("token").getAsLong());
    assertEquals("ACTIVE", str(got, "state"));
    assertEquals("10.0.0.7:9000", str(got, "address"));
    assertEquals("billing", got.getAsJsonObject("metadata").get("job").getAsString());
    long remaining = got.get("remainingMs").getAsLong();
    assertTrue(remaining > 0 && remaining <= 30_000, "expires in " + remaining);
    assertTrue(got.get("status").isJsonNull());

    Cli.Run table = run(cluster, "lease", "get", "get/billing-job").ok();
    assertTrue(
        table.out().contains("holder")
            && table.out().contains("runner-1")
            && table.out().contains("expires in"),
        table.out());
    assertTrue(Cli.cells(table.out()).contains(List.of("extended", "no")), table.out());
  }

  @Test
  void acquireOfAHeldNameFailsWithTheHolderAndTheSameHolderRenews() {
    long token = acquire("conflict/x", "runner-1").get("token").getAsLong();
    run(cluster, "lease", "acquire", "conflict/x", "--ttl", "30s", "--holder", "runner-2")
        .failed(
            LeaseholdCommand.EXIT_FAILED,
            "conflict/x is held by runner-1 (token " + token + ", expires in ");
    assertEquals(
        token,
        acquire("conflict/x", "runner-1").get("token").getAsLong(),
        "the same holder gets the same lease, renewed");
  }

  @Test
  void acquireWaitShowsWhoHoldsTheNameThenAcquiresItOnceReleased() throws Exception {
    long held = acquire("wait/x", "runner-1").get("token").getAsLong();
    Cli.Background waiting =
        new Cli.Background(
            Cli.at(
                cluster,
                "lease",
                "acquire",
                "wait/x",
                "--ttl",
                "30s",
                "--holder",
                "runner-2",
                "--wait",
                "1m",
                "-o",
                "json"));
    waiting.awaitErr(
        "waiting for wait/x: held by runner-1 (token " + held + "), expires in ", seconds(30));
    assertEquals("", waiting.out(), "nothing on stdout before the lease is acquired");
    assertTrue(
        waiting.exit.getNow(null) == null,
        "still waiting while runner-1 holds it: " + waiting.err());

    run(cluster, "lease", "release", "wait/x", "--token", "" + held).ok();
    assertEquals(0, waiting.awaitExit(seconds(30)), waiting.err());
    JsonObject got = Cli.parse(waiting.out());
    assertEquals("runner-2", str(got, "holder"));
    long token = got.get("token").getAsLong();
    assertTrue(token > held, "a later grant has a larger token: " + token);
    assertTrue(
        waiting.err().contains("acquired wait/x (token " + token + ") after "), waiting.err());
    assertEquals(
        token,
        run(cluster, "lease", "get", "wait/x", "-o", "json").ok().object().get("token").getAsLong(),
        "without --hold the lease outlives the command");
  }

  @Test
  void acquireWaitGivesUpAfterItsTimeoutWithExitOne() {
    long held = acquire("wait/busy", "runner-1").get("token").getAsLong();
    Cli.Run r =
        run(
            cluster,
            "lease",
            "acquire",
            "wait/busy",
            "--ttl",
            "30s",
            "--holder",
            "runner-2",
            "--wait",
            "1s");
    assertEquals(LeaseholdCommand.EXIT_FAILED, r.exit(), r.toString());
    assertEquals("", r.out());
    List<String> lines = r.err().lines().toList();
    assertTrue(
        lines
            .get(0)
            .startsWith(
                "waiting for wait/busy: held by runner-1 (token " + held + "), expires in "),
        r.err());
    assertTrue(
        lines.subList(0, lines.size() - 1).stream()
            .allMatch(l -> l.startsWith("waiting for wait/busy: ")),
        "progress, then one line for the failure: " + r.err());
    assertEquals(
        "leasehold lease acquire: wait/busy: not acquired within 1s; held by runner-1 (token "
            + held
            + ")",
        lines.get(lines.size() - 1));
  }

  @Test
  void getOfAFreeNameExitsOne() {
    run(cluster, "lease", "get", "free/nothing")
        .failed(LeaseholdCommand.EXIT_FAILED, "free/nothing is not held");
  }

  @Test
  void listFiltersByPrefixHolderAndStaleness() {
    acquire("list/a", "runner-1");
    acquire("list/b", "runner-2");
    acquire("other/c", "runner-1");
    assertEquals(
        List.of("list/a", "list/b"),
        names(run(cluster, "lease", "list", "--prefix", "list/", "-o", "json").ok().array()));
    assertEquals(
        List.of("list/a"),
        names(
            run(cluster, "lease", "list", "--prefix", "list/", "--holder", "runner-1", "-o", "json")
                .ok()
                .array()));
    assertEquals(
        List.of(),
        names(
            run(cluster, "lease", "list", "--prefix", "list/", "--stale", "-o", "json")
                .ok()
                .array()));

    // A holder that stops renewing: STALE after two heartbeats (the policy makes them short).
    run(cluster, "policy", "set", "stale", "--heartbeat", "500ms").ok();
    acquire("stale/x", "runner-gone");
    TestCluster.await(
        "the lease shows STALE",
        seconds(30),
        () ->
            names(
                    run(cluster, "lease", "list", "--prefix", "stale/", "--stale", "-o", "json")
                        .ok()
                        .array())
                .equals(List.of("stale/x")));
  }

  @Test
  void listTableHasAStableColumnSet() {
    acquire("snap/alpha", "runner-1");
    acquire("snap/beta-longer-name", "r2", "--address", "10.0.0.1:80");
    String table = run(cluster, "lease", "list", "--prefix", "snap/").ok().out();
    List<List<String>> cells = Cli.cells(table);
    assertEquals(List.of("NAME", "HOLDER", "TOKEN", "TTL", "EXPIRES IN", "STATE"), cells.get(0));
    assertEquals(3, cells.size(), table);
    assertEquals(List.of("snap/alpha", "runner-1"), cells.get(1).subList(0, 2));
    assertEquals(List.of("snap/beta-longer-name", "r2"), cells.get(2).subList(0, 2));
    for (List<String> row : cells.subList(1, 3)) {
      assertTrue(row.get(2).matches("\\d+"), row.toString());
      assertEquals("30s", row.get(3));
      assertTrue(row.get(4).matches("\\d+(\\.\\d)?s"), row.toString());
      assertEquals("ACTIVE", row.get(5));
    }
    Cli.assertAligned(table);

    String wide = run(cluster, "lease", "list", "--prefix", "snap/", "-o", "wide").ok().out();
    assertEquals(
        List.of(
            "NAME",
            "HOLDER",
            "TOKEN",
            "TTL",
            "EXPIRES IN",
            "STATE",
            "ADDRESS",
            "STATUS",
            "ACQUIRED",
            "RENEWED",
            "RENEWS",
            "METADATA",
            "EXTENDED"),
        Cli.cells(wide).get(0));
    assertEquals("10.0.0.1:80", Cli.cells(wide).get(2).get(6));
    Cli.assertAligned(wide);
  }

  @Test
  void releaseWithTheTokenFreesTheNameAndAWrongTokenExitsOne() {
    long token = acquire("rel/x", "runner-1").get("token").getAsLong();
    run(cluster, "lease", "release", "rel/x", "--token", "" + (token - 1))
        .failed(
            LeaseholdCommand.EXIT_FAILED, "rel/x: no lease with token " + (token - 1) + " is held");
    JsonObject released =
        run(cluster, "lease", "release", "rel/x", "--token", "" + token, "-o", "json")
            .ok()
            .object();
    assertTrue(released.get("released").getAsBoolean());
    run(cluster, "lease", "get", "rel/x").failed(LeaseholdCommand.EXIT_FAILED, "not held");
    JsonObject history =
        run(cluster, "lease", "history", "rel/x", "-o", "json")
            .ok()
            .array()
            .get(0)
            .getAsJsonObject();
    assertEquals("RELEASED", str(history, "reason"));
  }

  @Test
  void revokeEndsTheLeaseAndHistorySaysWhyByNameAndByHolder() {
    long token = acquire("rev/job", "runner-9").get("token").getAsLong();
    JsonObject revoked =
        run(cluster, "lease", "revoke", "rev/job", "--reason", "stuck for an hour", "-o", "json")
            .ok()
            .object();
    assertEquals(token, revoked.get("token").getAsLong());
    assertEquals("REVOKED", str(revoked, "state"), "the lease as it ended, not UNKNOWN");
    acquire("rev/table", "runner-10");
    String shown = run(cluster, "lease", "revoke", "rev/table", "--reason", "again").ok().out();
    assertTrue(Cli.cells(shown).contains(List.of("state", "REVOKED")), shown);
    run(cluster, "lease", "revoke", "rev/job", "--reason", "again")
        .failed(LeaseholdCommand.EXIT_FAILED, "rev/job: no lease is held");

    JsonArray byName = run(cluster, "lease", "history", "rev/job", "-o", "json").ok().array();
    JsonObject ended = byName.get(0).getAsJsonObject();
    assertEquals(
        List.of(
            "name",
            "holder",
            "token",
            "ttlMs",
            "acquiredAt",
            "endedAt",
            "heldMs",
            "renewCount",
            "reason",
            "message",
            "revision",
            "session"),
        List.copyOf(ended.keySet()));
    assertEquals("REVOKED", str(ended, "reason"));
    assertEquals("stuck for an hour", str(ended, "message"));
    assertEquals(token, ended.get("token").getAsLong());

    JsonArray byHolder =
        run(cluster, "lease", "history", "--holder", "runner-9", "-o", "json").ok().array();
    assertEquals(List.of("rev/job"), names(byHolder));
    String table = run(cluster, "lease", "history", "rev/job").ok().out();
    assertEquals(
        List.of("NAME", "HOLDER", "TOKEN", "ACQUIRED", "ENDED", "REASON", "MESSAGE"),
        Cli.cells(table).get(0));
  }

  @Test
  void acquireHoldKeepsTheLeaseUntilInterruptedThenReleasesIt() throws Exception {
    Cli.Background hold =
        new Cli.Background(
            Cli.at(
                cluster,
                "lease",
                "acquire",
                "hold/x",
                "--ttl",
                "3s",
                "--holder",
                "holder-1",
                "--hold",
                "-o",
                "json"));
    hold.awaitErr("holding hold/x", seconds(30));
    long token = Cli.parse(hold.out()).get("token").getAsLong();
    // Renewed past its TTL: the same lease is still there after a few TTLs.
    JsonObject first = run(cluster, "lease", "get", "hold/x", "-o", "json").ok().object();
    TestCluster.await(
        "renewed a few times",
        seconds(30),
        () ->
            run(cluster, "lease", "get", "hold/x", "-o", "json")
                    .ok()
                    .object()
                    .get("renewCount")
                    .getAsLong()
                >= first.get("renewCount").getAsLong() + 3);
    assertEquals(
        token,
        run(cluster, "lease", "get", "hold/x", "-o", "json")
            .ok()
            .object()
            .get("token")
            .getAsLong());

    hold.interrupt();
    assertEquals(0, hold.awaitExit(seconds(30)), hold.err());
    JsonElement reason =
        run(cluster, "lease", "history", "hold/x", "-o", "json")
            .ok()
            .array()
            .get(0)
            .getAsJsonObject()
            .get("reason");
    assertEquals("RELEASED", reason.getAsString());
  }

  @Test
  void acquireWithoutHoldLeavesTheLeaseHeldAfterTheCommandExits() {
    acquire("nohold/x", "holder-1");
    JsonObject got = run(cluster, "lease", "get", "nohold/x", "-o", "json").ok().object();
    assertEquals("holder-1", str(got, "holder"));
    assertNull(str(got, "address"));
  }
}
