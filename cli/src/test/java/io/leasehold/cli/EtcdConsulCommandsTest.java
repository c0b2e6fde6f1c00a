package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static io.leasehold.cli.Cli.seconds;
import static io.leasehold.cli.Cli.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commands an etcd or Consul user looks for, on three nodes: {@code lease renew|keep-alive},
 * {@code lease get --watch}, {@code elect} and {@code service deregister|set-status}.
 */
class EtcdConsulCommandsTest {
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

  static JsonObject acquire(String name, String ttl) {
    return run(
            cluster, "lease", "acquire", name, "--ttl", ttl, "--holder", "runner-1", "-o", "json")
        .ok()
        .object();
  }

  static List<JsonObject> lines(Cli.Background b) {
    return b.out().lines().map(Cli::parse).toList();
  }

  static void awaitLines(Cli.Background b, int n) {
    TestCluster.await(
        () -> n + " lines; out: " + b.out() + " err: " + b.err() + " exit: " + b.exit.getNow(null),
        seconds(30),
        () -> b.out().lines().count() >= n);
  }

  // ---- lease renew ----

  @Test
  void renewRenewsAPlainAcquireOnceAndPrintsItsNewDeadline() {
    JsonObject acquired = acquire("renew/x", "30s");
    long token = acquired.get("token").getAsLong();
    JsonObject renewed =
        run(cluster, "lease", "renew", "renew/x", "--token", "" + token, "-o", "json")
            .ok()
            .object();
    assertEquals(
        List.of("name", "token", "ttlMs", "expiresAt", "deadline", "heartbeatMs"),
        List.copyOf(renewed.keySet()),
        "the JSON shape is stable");
    assertEquals(token, renewed.get("token").getAsLong());
    assertEquals(30_000, renewed.get("ttlMs").getAsLong());
    assertEquals(10_000, renewed.get("heartbeatMs").getAsLong());
    assertFalse(
        Instant.parse(str(renewed, "expiresAt"))
            .isBefore(Instant.parse(str(acquired, "expiresAt"))),
        renewed.toString());
    JsonObject read = run(cluster, "lease", "get", "renew/x", "-o", "json").ok().object();
    assertEquals(1, read.get("renewCount").getAsLong());
    // The deadline printed is the leader's: expiresAt plus grace, and what a read then shows. The
    // leader counts from when it applied the renewal, a moment after it stamped the reply; a read
    // counts the leader's remaining time from when it asked, so it may show it a little early.
    Instant deadline = Instant.parse(str(renewed, "deadline"));
    assertFalse(deadline.isBefore(Instant.parse(str(renewed, "expiresAt"))), renewed.toString());
    Instant readDeadline = Instant.parse(str(read, "deadline"));
    assertFalse(readDeadline.isBefore(deadline.minusSeconds(1)), read + " / " + renewed);
    assertTrue(readDeadline.isBefore(deadline.plusSeconds(2)), read + " / " + renewed);

    String table = run(cluster, "lease", "renew", "renew/x", "--token", "" + token).ok().out();
    assertEquals(List.of("FIELD", "VALUE"), Cli.cells(table).get(0));
    assertTrue(table.contains("expires") && table.contains("30s"), table);
  }

  @Test
  void renewFailsForAWrongTokenAPolicyRefusalAndBadInput() {
    long token = acquire("renew/wrong", "30s").get("token").getAsLong();
    run(cluster, "lease", "renew", "renew/wrong", "--token", "" + (token - 1))
        .failed(
            LeaseholdCommand.EXIT_FAILED,
            "renew/wrong: no lease with token " + (token - 1) + " is held");
    run(cluster, "lease", "renew", "renew/wrong", "--token", "1000000000000")
        .failed(LeaseholdCommand.EXIT_USAGE, "token 1000000000000 was never issued");
    run(cluster, "lease", "renew", "renew/wrong", "--token", "0")
        .failed(LeaseholdCommand.EXIT_USAGE, "--token: must be positive, got 0");
    run(cluster, "lease", "renew", "renew/wrong").failed(LeaseholdCommand.EXIT_USAGE, "--token");
    run(cluster, "lease", "renew", "renew/wrong", "--token", "x")
        .failed(LeaseholdCommand.EXIT_USAGE, "--token");

    long refused = acquire("polrenew/x", "30s").get("token").getAsLong();
    run(cluster, "policy", "set", "polrenew", "--max-ttl", "10s").ok();
    run(cluster, "lease", "renew", "polrenew/x", "--token", "" + refused)
        .failed(
            LeaseholdCommand.EXIT_FAILED,
            "polrenew/x: renewal refused by policy (TTL_OUT_OF_RANGE)");
    run(cluster, "lease", "keep-alive", "polrenew/x", "--token", "" + refused)
        .failed(LeaseholdCommand.EXIT_FAILED, "renewal refused by policy (TTL_OUT_OF_RANGE)");
    run(cluster, "policy", "delete", "polrenew").ok();
  }

  // ---- lease keep-alive ----

  @Test
  void keepAliveKeepsAPlainAcquireAlivePastItsTtlUntilInterrupted() throws Exception {
    JsonObject acquired = acquire("keep/x", "3s");
    long token = acquired.get("token").getAsLong();
    Cli.Background keep =
        new Cli.Background(
            Cli.at(cluster, "lease", "keep-alive", "keep/x", "--token", "" + token, "-o", "json"));
    keep.awaitErr("keeping keep/x (token " + token + ") alive every 1s", seconds(30));
    awaitLines(keep, 5); // more than the TTL's worth of renewals
    List<JsonObject> renewals = lines(keep);
    assertTrue(
        renewals.stream()
            .allMatch(
                r -> r.get("token").getAsLong() == token && r.get("ttlMs").getAsLong() == 3000),
        keep.out());
    Instant last = Instant.parse(str(renewals.get(renewals.size() - 1), "expiresAt"));
    assertTrue(
        last.isAfter(Instant.parse(str(acquired, "expiresAt")).plusSeconds(2)),
        "the deadline moved on: " + keep.out());
    JsonObject held = run(cluster, "lease", "get", "keep/x", "-o", "json").ok().object();
    assertEquals(
        token,
        held.get("token").getAsLong(),
        "the same lease is still held after more than its TTL");
    assertTrue(held.get("renewCount").getAsLong() >= 4, held.toString());

    keep.interrupt();
    assertEquals(0, keep.awaitExit(seconds(30)), keep.err());
    assertFalse(keep.err().contains("lost"), keep.err());
  }

  @Test
  void keepAlivePrintsReadableLinesAndExitsOneWhenTheLeaseIsLost() throws Exception {
    long token = acquire("keep/lost", "30s").get("token").getAsLong();
    Cli.Background keep =
        new Cli.Background(
            Cli.at(
                cluster,
                "lease",
                "keep-alive",
                "keep/lost",
                "--token",
                "" + token,
                "--interval",
                "300ms"));
    keep.awaitErr("alive every 300ms", seconds(30));
    awaitLines(keep, 2);
    assertTrue(
        keep.out()
            .lines()
            .findFirst()
            .orElseThrow()
            .matches(
                "renewed keep/lost token="
                    + token
                    + " ttl=30s expires=\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ"),
        keep.out());
    run(cluster, "lease", "revoke", "keep/lost", "--reason", "taken away").ok();
    assertEquals(LeaseholdCommand.EXIT_FAILED, keep.awaitExit(seconds(30)), keep.err());
    assertTrue(
        keep.err()
            .contains(
                "leasehold lease keep-alive: lost the lease on keep/lost (token "
                    + token
                    + "): no longer held"),
        keep.err());
  }

  @Test
  void keepAliveRefusesBadInputAndANameNotHeld() {
    long token = acquire("keep/bad", "30s").get("token").getAsLong();
    run(cluster, "lease", "keep-alive", "keep/bad", "--token", "" + token, "--interval", "0s")
        .failed(LeaseholdCommand.EXIT_USAGE, "--interval: must be positive");
    run(cluster, "lease", "keep-alive", "keep/bad", "--token", "" + token, "--interval", "1m")
        .failed(
            LeaseholdCommand.EXIT_USAGE,
            "--interval: must be shorter than the lease's TTL (30s), got 1m");
    run(cluster, "lease", "keep-alive", "keep/bad", "--token", "-3")
        .failed(LeaseholdCommand.EXIT_USAGE, "--token: must be positive");
    run(cluster, "lease", "keep-alive", "keep/bad", "--token", "" + token, "--interval", "soon")
        .failed(LeaseholdCommand.EXIT_USAGE, "'soon' is not a duration");
    run(cluster, "lease", "keep-alive", "keep/free", "--token", "7")
        .failed(LeaseholdCommand.EXIT_FAILED, "keep/free: no lease with token 7 is held");
  }

  // ---- lease get --watch ----

  @Test
  void getWatchShowsTheLeaseAgainAtEveryChangeUntilInterrupted() throws Exception {
    Cli.Background watch =
        new Cli.Background(Cli.at(cluster, "lease", "get", "watched/x", "--watch", "-o", "json"));
    awaitLines(watch, 1);
    JsonObject free = lines(watch).get(0);
    assertEquals(List.of("name", "lease"), List.copyOf(free.keySet()));
    assertEquals("watched/x", str(free, "name"));
    assertTrue(free.get("lease").isJsonNull(), "a free name shows as not held: " + free);

    long token = acquire("watched/x", "30s").get("token").getAsLong();
    awaitLines(watch, 2);
    JsonObject held = lines(watch).get(1).getAsJsonObject("lease");
    assertEquals(token, held.get("token").getAsLong());
    assertEquals("runner-1", str(held, "holder"));
    assertEquals(0, held.get("renewCount").getAsLong());

    run(cluster, "lease", "renew", "watched/x", "--token", "" + token).ok();
    awaitLines(watch, 3);
    assertEquals(
        1, lines(watch).get(2).getAsJsonObject("lease").get("renewCount").getAsLong(), watch.out());

    run(cluster, "lease", "release", "watched/x", "--token", "" + token).ok();
    awaitLines(watch, 4);
    assertTrue(lines(watch).get(3).get("lease").isJsonNull(), watch.out());
    watch.interrupt();
    assertEquals(0, watch.awaitExit(seconds(30)), watch.err());
    assertEquals("", watch.err());
  }

  @Test
  void getWatchPrintsTheTableForPeopleAndPlainGetStillExitsOneForAFreeName() throws Exception {
    acquire("watched/table", "30s");
    Cli.Background watch =
        new Cli.Background(Cli.at(cluster, "lease", "get", "watched/table", "-w"));
    watch.awaitOut("runner-1", seconds(30));
    assertTrue(watch.out().startsWith("FIELD"), watch.out());
    run(cluster, "lease", "revoke", "watched/table", "--reason", "done").ok();
    watch.awaitOut("watched/table is not held", seconds(30));
    watch.interrupt();
    assertEquals(0, watch.awaitExit(seconds(30)), watch.err());
    run(cluster, "lease", "get", "watched/table")
        .failed(LeaseholdCommand.EXIT_FAILED, "watched/table is not held");
    run(cluster, "lease", "get", "no-namespace", "--watch")
        .failed(LeaseholdCommand.EXIT_USAGE, "namespace");
  }

  // ---- elect ----

  @Test
  void electCampaignsPrintsTheLeaderHandsOverOnCtrlCAndListenFollowsIt() throws Exception {
    Cli.Background listen =
        new Cli.Background(Cli.at(cluster, "elect", "election/billing", "--listen", "-o", "json"));
    awaitLines(listen, 1);
    assertEquals(
        List.of("name", "leader", "token", "value"), List.copyOf(lines(listen).get(0).keySet()));
    assertTrue(lines(listen).get(0).get("leader").isJsonNull(), "no leader yet: " + listen.out());

    Cli.Background first =
        new Cli.Background(
            Cli.at(
                cluster,
                "elect",
                "election/billing",
                "10.0.0.1:8080",
                "--holder",
                "cand-1",
                "-o",
                "json"));
    awaitLines(first, 1);
    JsonObject led = lines(first).get(0);
    assertEquals("cand-1", str(led, "leader"));
    assertEquals("10.0.0.1:8080", str(led, "value"));
    long firstToken = led.get("token").getAsLong();
    first.awaitErr(
        "leading election/billing (token " + firstToken + "); Ctrl-C resigns", seconds(30));

    Cli.Background second =
        new Cli.Background(
            Cli.at(cluster, "elect", "election/billing", "10.0.0.2:8080", "--holder", "cand-2"));
    second.awaitErr(
        "waiting for election/billing: led by cand-1 (token "
            + firstToken
            + "), value 10.0.0.1:8080",
        seconds(30));
    assertEquals("", second.out(), "nothing on stdout until it leads");
    listen.awaitOut("\"leader\":\"cand-1\"", seconds(30));

    first.interrupt(); // Ctrl-C resigns: the next candidate leads
    assertEquals(0, first.awaitExit(seconds(30)), first.err());
    second.awaitOut("election/billing leader=cand-2 token=", seconds(30));
    assertTrue(
        second
            .out()
            .strip()
            .matches("election/billing leader=cand-2 token=\\d+ value=10\\.0\\.0\\.2:8080"),
        second.out());
    listen.awaitOut("\"leader\":\"cand-2\"", seconds(30));
    JsonObject now = lines(listen).get(lines(listen).size() - 1);
    assertTrue(
        now.get("token").getAsLong() > firstToken,
        "a later leader has a larger token: " + listen.out());

    run(cluster, "lease", "revoke", "election/billing", "--reason", "step down")
        .ok(); // the leadership is lost
    assertEquals(LeaseholdCommand.EXIT_FAILED, second.awaitExit(seconds(30)), second.err());
    assertTrue(
        second.err().contains("leasehold elect: lost the leadership of election/billing"),
        second.err());
    TestCluster.await(
        () -> "no leader after the revocation: " + listen.out(),
        seconds(30),
        () -> lines(listen).get(lines(listen).size() - 1).get("leader").isJsonNull());
    listen.interrupt();
    assertEquals(0, listen.awaitExit(seconds(30)), listen.err());
    List<String> leaders =
        lines(listen).stream()
            .map(l -> l.get("leader").isJsonNull() ? "-" : str(l, "leader"))
            .toList();
    assertEquals(List.of("-", "cand-1"), leaders.subList(0, 2), listen.out());
    assertTrue(
        leaders.indexOf("cand-2") > 1 && leaders.get(leaders.size() - 1).equals("-"),
        "cand-2 led, then no one: " + leaders);
  }

  @Test
  void electCtrlCWhileCampaigningWithdrawsAndBadInputIsAUsageError() throws Exception {
    long held = acquire("election/busy", "30s").get("token").getAsLong();
    Cli.Background waiting =
        new Cli.Background(Cli.at(cluster, "elect", "election/busy", "--ttl", "5s"));
    waiting.awaitErr(
        "waiting for election/busy: led by runner-1 (token " + held + ")", seconds(30));
    waiting.interrupt();
    assertEquals(0, waiting.awaitExit(seconds(30)), waiting.err());
    assertEquals("", waiting.out());
    assertEquals(
        held,
        run(cluster, "lease", "get", "election/busy", "-o", "json")
            .ok()
            .object()
            .get("token")
            .getAsLong());

    run(cluster, "elect", "election/x", "v", "--listen")
        .failed(LeaseholdCommand.EXIT_USAGE, "--listen: observes only; it takes no VALUE");
    run(cluster, "elect", "election/x", "--listen", "--ttl", "5s")
        .failed(LeaseholdCommand.EXIT_USAGE, "--listen: observes only");
    run(cluster, "elect", "election/x", "--ttl", "0s")
        .failed(LeaseholdCommand.EXIT_USAGE, "--ttl: must be positive");
    run(cluster, "elect", "election/x", "")
        .failed(LeaseholdCommand.EXIT_USAGE, "VALUE: must not be empty");
    run(cluster, "elect").failed(LeaseholdCommand.EXIT_USAGE, "NAME");
    run(cluster, "elect", "no-namespace", "v").failed(LeaseholdCommand.EXIT_USAGE, "namespace");
  }

  // ---- service deregister | set-status ----

  @Test
  void setStatusDrainsAnInstanceAndDeregisterTakesItOut() {
    long token =
        run(
                cluster,
                "service",
                "register",
                "billing",
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
            .object()
            .get("token")
            .getAsLong();
    JsonObject drained =
        run(cluster, "service", "set-status", "billing", "i-1", "DRAINING", "-o", "json")
            .ok()
            .object();
    assertEquals("DRAINING", str(drained, "status"));
    assertEquals(token, drained.get("token").getAsLong(), "the same registration");
    assertEquals("10.0.0.7:8443", str(drained, "address"));
    assertEquals("a", drained.getAsJsonObject("metadata").get("zone").getAsString());
    assertEquals(
        0,
        run(cluster, "service", "resolve", "billing", "-o", "json").ok().array().size(),
        "a draining instance is not resolved");
    String table =
        run(cluster, "service", "set-status", "billing", "i-1", "SERVING", "--token", "" + token)
            .ok()
            .out();
    assertEquals(
        List.of("SERVICE", "INSTANCE", "ADDRESS", "STATUS", "TOKEN"), Cli.cells(table).get(0));
    assertEquals(
        List.of("billing", "i-1", "10.0.0.7:8443", "SERVING", "" + token), Cli.cells(table).get(1));

    run(cluster, "service", "deregister", "billing", "i-1", "--token", "" + (token - 1))
        .failed(
            LeaseholdCommand.EXIT_FAILED,
            "billing/i-1: no registration with token " + (token - 1) + " is live");
    JsonObject gone =
        run(cluster, "service", "deregister", "billing", "i-1", "-o", "json").ok().object();
    assertEquals(
        List.of("service", "instance", "token", "deregistered"), List.copyOf(gone.keySet()));
    assertEquals(token, gone.get("token").getAsLong());
    assertTrue(gone.get("deregistered").getAsBoolean());
    JsonArray all =
        run(cluster, "service", "resolve", "billing", "--all", "-o", "json").ok().array();
    assertEquals(0, all.size(), all.toString());
    assertEquals(
        "RELEASED",
        str(
            run(cluster, "lease", "history", "service/billing/i-1", "-o", "json")
                .ok()
                .array()
                .get(0)
                .getAsJsonObject(),
            "reason"));

    run(cluster, "service", "deregister", "billing", "i-1")
        .failed(LeaseholdCommand.EXIT_FAILED, "billing/i-1 is not registered");
    run(cluster, "service", "deregister", "billing", "i-1", "--token", "" + token)
        .failed(
            LeaseholdCommand.EXIT_FAILED,
            "billing/i-1: no registration with token " + token + " is live");
    run(cluster, "service", "set-status", "billing", "i-1", "DRAINING")
        .failed(LeaseholdCommand.EXIT_FAILED, "billing/i-1 is not registered");
  }

  @Test
  void serviceDeregisterAndSetStatusRefuseBadInput() {
    long token =
        run(
                cluster,
                "service",
                "register",
                "bad",
                "i-1",
                "--address",
                "10.0.0.1:1",
                "--ttl",
                "30s",
                "-o",
                "json")
            .ok()
            .object()
            .get("token")
            .getAsLong();
    run(cluster, "service", "set-status", "bad", "i-1", " ")
        .failed(LeaseholdCommand.EXIT_USAGE, "STATUS: must not be empty");
    run(cluster, "service", "set-status", "bad", "i-1")
        .failed(LeaseholdCommand.EXIT_USAGE, "STATUS");
    run(cluster, "service", "set-status", "bad", "i-1", "DRAINING", "--token", "0")
        .failed(LeaseholdCommand.EXIT_USAGE, "--token: must be positive");
    run(cluster, "service", "set-status", "bad", "i-1", "DRAINING", "--token", "" + (token - 1))
        .failed(
            LeaseholdCommand.EXIT_FAILED,
            "bad/i-1: no registration with token " + (token - 1) + " is live");
    run(cluster, "service", "deregister", "bad", "i-1", "--token", "-1")
        .failed(LeaseholdCommand.EXIT_USAGE, "--token: must be positive");
    run(cluster, "service", "deregister", "bad").failed(LeaseholdCommand.EXIT_USAGE, "INSTANCE");
    run(cluster, "service", "deregister", "bad", "a/b", "--token", "" + token)
        .failed(LeaseholdCommand.EXIT_USAGE, "instance");
    assertEquals(
        1,
        StreamSupport.stream(
                run(cluster, "service", "resolve", "bad", "-o", "json").ok().array().spliterator(),
                false)
            .count(),
        "nothing changed");
  }
}
