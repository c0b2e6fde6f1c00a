package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static io.leasehold.cli.Cli.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code session list|get|close}, {@code lease transfer|accept} and {@code lease list --holder}
 * against a real one-node cluster.
 */
class SessionCommandsTest {
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

  static LeaseholdClient client(String holder) {
    return LeaseholdClient.builder()
        .endpoints(Cli.endpoints(cluster).split(","))
        .holder(holder)
        .sessionTtl(Duration.ofSeconds(30))
        .releaseOnClose(false)
        .build();
  }

  static List<String> names(JsonArray a) {
    return StreamSupport.stream(a.spliterator(), false)
        .map(e -> str(e.getAsJsonObject(), "name"))
        .toList();
  }

  @Test
  void sessionsAreListedShownAndClosedWithTheirLeases() throws Exception {
    try (LeaseholdClient client = client("proxy-7")) {
      Lease a = client.blocking().acquire("mailbox/s-a", LeaseOptions.defaults());
      client.blocking().acquire("mailbox/s-b", LeaseOptions.defaults());
      long session = a.session();

      JsonArray sessions =
          run(cluster, "session", "list", "--holder", "proxy-7", "-o", "json").ok().array();
      assertEquals(1, sessions.size());
      assertEquals(session, sessions.get(0).getAsJsonObject().get("id").getAsLong());
      assertEquals(30_000, sessions.get(0).getAsJsonObject().get("ttlMs").getAsLong());

      JsonObject got =
          run(cluster, "session", "get", Long.toString(session), "-o", "json").ok().object();
      assertEquals("proxy-7", str(got, "holder"));
      assertEquals(2, got.get("leaseCount").getAsLong());
      assertEquals(
          List.of("mailbox/s-a", "mailbox/s-b"),
          StreamSupport.stream(got.getAsJsonArray("leases").spliterator(), false)
              .map(e -> e.getAsString())
              .toList());
      assertEquals(
          session,
          run(cluster, "lease", "get", "mailbox/s-a", "-o", "json")
              .ok()
              .object()
              .get("session")
              .getAsLong());

      assertEquals(
          List.of("mailbox/s-a", "mailbox/s-b"),
          names(run(cluster, "lease", "list", "--holder", "proxy-7", "-o", "json").ok().array()));

      JsonObject closed =
          run(cluster, "session", "close", Long.toString(session), "-o", "json").ok().object();
      assertEquals(2, closed.get("leasesEnded").getAsLong());
      JsonObject ended =
          run(cluster, "lease", "history", "mailbox/s-a", "-o", "json")
              .ok()
              .array()
              .get(0)
              .getAsJsonObject();
      assertEquals("SESSION_CLOSED", str(ended, "reason"));
      assertEquals("session " + session, str(ended, "message"));
      assertEquals(session, ended.get("session").getAsLong());
      run(cluster, "session", "get", Long.toString(session))
          .failed(LeaseholdCommand.EXIT_FAILED, "is not live");
      run(cluster, "session", "close", Long.toString(session))
          .failed(LeaseholdCommand.EXIT_FAILED, "is not live");
      run(cluster, "session", "get", "0")
          .failed(LeaseholdCommand.EXIT_USAGE, "ID: must be a positive session id");
    }
  }

  @Test
  void transferHandsTheNameOverAndAnOfferWaitsForItsAcceptance() {
    long token =
        run(
                cluster,
                "lease",
                "acquire",
                "partition/t1",
                "--ttl",
                "30s",
                "--holder",
                "runner-a",
                "-o",
                "json")
            .ok()
            .object()
            .get("token")
            .getAsLong();
    JsonObject moved =
        run(cluster, "lease", "transfer", "partition/t1", "--to", "runner-b", "-o", "json")
            .ok()
            .object();
    assertEquals("runner-b", str(moved, "holder"));
    long next = moved.get("token").getAsLong();
    assertTrue(next > token);
    assertEquals(
        "TRANSFERRED",
        str(
            run(cluster, "lease", "history", "partition/t1", "-o", "json")
                .ok()
                .array()
                .get(0)
                .getAsJsonObject(),
            "reason"));
    run(
            cluster,
            "lease",
            "transfer",
            "partition/t1",
            "--to",
            "runner-c",
            "--token",
            Long.toString(token))
        .failed(LeaseholdCommand.EXIT_FAILED, "no lease with token " + token + " is held");

    JsonObject offered =
        run(
                cluster,
                "lease",
                "transfer",
                "partition/t1",
                "--to",
                "runner-c",
                "--accept-within",
                "60s",
                "-o",
                "json")
            .ok()
            .object();
    long offer = offered.get("offer").getAsLong();
    assertEquals(
        "runner-b",
        str(run(cluster, "lease", "get", "partition/t1", "-o", "json").ok().object(), "holder"),
        "an offer leaves the lease where it is");
    run(
            cluster,
            "lease",
            "accept",
            "partition/t1",
            "--offer",
            Long.toString(offer),
            "--holder",
            "runner-d")
        .failed(LeaseholdCommand.EXIT_FAILED, "offered to runner-c");
    JsonObject accepted =
        run(
                cluster,
                "lease",
                "accept",
                "partition/t1",
                "--offer",
                Long.toString(offer),
                "--holder",
                "runner-c",
                "-o",
                "json")
            .ok()
            .object();
    assertEquals("runner-c", str(accepted, "holder"));
    assertTrue(accepted.get("token").getAsLong() > next);
    run(
            cluster,
            "lease",
            "accept",
            "partition/t1",
            "--offer",
            Long.toString(offer),
            "--holder",
            "runner-c")
        .failed(LeaseholdCommand.EXIT_FAILED, "no longer stands");
  }
}
