package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static io.leasehold.cli.Cli.seconds;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code watch PREFIX}: history from a revision, then live events, as lines or JSON Lines. */
class WatchCommandTest {
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

  static long acquire(String name) {
    return acquired(name).get("token").getAsLong();
  }

  /**
   * The lease as {@code lease acquire -o json} prints it: its token, and the revision of the grant
   * ({@code modRevision}).
   */
  static JsonObject acquired(String name) {
    return run(cluster, "lease", "acquire", name, "--ttl", "30s", "--holder", "w-1", "-o", "json")
        .ok()
        .object();
  }

  @Test
  void streamsHistoryThenLiveEventsAsJsonLines() throws Exception {
    JsonObject a = acquired("watch/a");
    long firstToken = a.get("token").getAsLong();
    long first = a.get("modRevision").getAsLong();
    run(cluster, "lease", "release", "watch/a", "--token", "" + firstToken).ok();
    acquire("elsewhere/x");
    Cli.Background watch =
        new Cli.Background(
            Cli.at(cluster, "watch", "watch/", "--from-revision", "" + first, "-o", "json"));
    watch.awaitOut("RELEASED", seconds(30));
    long live = acquire("watch/b");
    watch.awaitOut("\"name\":\"watch/b\"", seconds(30));
    watch.interrupt();
    assertEquals(0, watch.awaitExit(seconds(30)), watch.err());

    List<JsonObject> events = watch.out().lines().map(Cli::parse).toList();
    assertEquals(
        List.of("ACQUIRED watch/a", "RELEASED watch/a", "ACQUIRED watch/b"),
        events.stream().map(e -> Cli.str(e, "type") + " " + Cli.str(e, "name")).toList());
    assertEquals(first, events.get(0).get("revision").getAsLong());
    assertEquals("RELEASED", Cli.str(events.get(1), "reason"));
    assertEquals(live, events.get(2).getAsJsonObject("lease").get("token").getAsLong());
    assertEquals(
        List.of("revision", "type", "name", "time", "reason", "message", "lease", "previous"),
        List.copyOf(events.get(0).keySet()));
  }

  @Test
  void typesFilterTheEventsAndTableLinesAreReadable() throws Exception {
    JsonObject a = acquired("typed/a");
    long token = a.get("token").getAsLong();
    run(cluster, "lease", "revoke", "typed/a", "--reason", "why not").ok();
    Cli.Background watch =
        new Cli.Background(
            Cli.at(
                cluster,
                "watch",
                "typed/",
                "--from-revision",
                "" + a.get("modRevision").getAsLong(),
                "--types",
                "REVOKED"));
    watch.awaitOut("REVOKED typed/a", seconds(30));
    watch.interrupt();
    assertEquals(0, watch.awaitExit(seconds(30)), watch.err());
    List<String> lines = watch.out().lines().toList();
    assertEquals(1, lines.size(), watch.out());
    assertTrue(
        lines
            .get(0)
            .matches(
                "\\d+ REVOKED typed/a holder=w-1 token="
                    + token
                    + " ttl=30s reason=REVOKED message=\"why not\""),
        lines.get(0));
  }

  static JsonObject acquired(String name, String holder, String zone, String status) {
    return run(
            cluster,
            "lease",
            "acquire",
            name,
            "--ttl",
            "30s",
            "--holder",
            holder,
            "--meta",
            "zone=" + zone,
            "--status",
            status,
            "-o",
            "json")
        .ok()
        .object();
  }

  @Test
  void attributeFiltersShowLeasesEnteringAndLeavingThem() throws Exception {
    long first = acquired("zoned/a", "w-1", "eu-1a", "SERVING").get("modRevision").getAsLong();
    acquired("zoned/b", "w-2", "eu-1b", "SERVING");
    acquired("zoned/a", "w-1", "eu-1a", "DRAINING"); // the holder asks again: an update
    acquired("zoned/b", "w-2", "eu-1b", "DRAINING");
    Cli.Background watch =
        new Cli.Background(
            Cli.at(
                cluster,
                "watch",
                "zoned/",
                "--from-revision",
                "" + first,
                "--zone",
                "eu-1a",
                "--status",
                "SERVING"));
    watch.awaitOut("was=SERVING", seconds(30));
    acquired("zoned/c", "w-3", "eu-1a", "SERVING");
    watch.awaitOut("zoned/c", seconds(30));
    watch.interrupt();
    assertEquals(0, watch.awaitExit(seconds(30)), watch.err());
    List<String> lines = watch.out().lines().map(l -> l.replaceAll("^\\d+ ", "")).toList();
    assertEquals(3, lines.size(), watch.out());
    assertTrue(lines.get(0).startsWith("ACQUIRED zoned/a holder=w-1"), lines.get(0));
    assertTrue(lines.get(0).endsWith(" status=SERVING"), lines.get(0));
    assertTrue(lines.get(1).startsWith("UPDATED zoned/a holder=w-1"), lines.get(1));
    assertTrue(lines.get(1).endsWith(" status=DRAINING was=SERVING"), lines.get(1));
    assertTrue(lines.get(2).startsWith("ACQUIRED zoned/c holder=w-3"), lines.get(2));
  }

  @Test
  void aZoneGivenTwiceIsRefusedNamingIt() {
    run(cluster, "watch", "x/", "--zone", "a,a").failed(LeaseholdCommand.EXIT_USAGE, "zones[1]");
  }

  @Test
  void aGroupGoesWithARevision() {
    run(cluster, "watch", "x/", "--from-group", "2")
        .failed(LeaseholdCommand.EXIT_USAGE, "--from-group");
    run(cluster, "watch", "x/", "--from-revision", "3", "--from-group", "-1")
        .failed(LeaseholdCommand.EXIT_USAGE, "--from-group");
    // This cluster has no lease groups: a revision of group 2 is not one of its revisions.
    run(cluster, "watch", "x/", "--from-revision", "3", "--from-group", "2")
        .failed(LeaseholdCommand.EXIT_FAILED, "start_group");
  }

  @Test
  void anUnknownTypeIsAUsageError() {
    run(cluster, "watch", "x/", "--types", "EXPLODED")
        .failed(LeaseholdCommand.EXIT_USAGE, "--types");
  }
}
