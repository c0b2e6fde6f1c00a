package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static io.leasehold.cli.Cli.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * After a restart the leader gives every lease a full TTL; {@code lease get} and {@code lease list}
 * show that deadline, and say it was a leader change that moved it.
 */
class LeaseDeadlineCommandTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void afterARestartLeaseGetAndListShowTheDeadlineTheLeaderActsOnAndWhy() throws Exception {
    cluster = TestCluster.start(1, dir);
    String node = cluster.awaitLeader().id();
    run(cluster, "lease", "acquire", "lock/billing-job", "--ttl", "8s", "--holder", "runner-1")
        .ok();
    cluster.stopNode(node);
    cluster.startNode(node);
    cluster.awaitLeader();

    JsonObject got =
        TestCluster.eventually(
            "lease get shows the leader's deadline",
            Duration.ofSeconds(20),
            () -> {
              JsonObject o =
                  run(cluster, "lease", "get", "lock/billing-job", "-o", "json").ok().object();
              return "leader".equals(str(o, "deadlineSource")) ? Optional.of(o) : Optional.empty();
            });
    JsonObject change = got.getAsJsonArray("extensions").get(0).getAsJsonObject();
    assertEquals("leader change", str(change, "reason"));
    Instant expiresAt = Instant.parse(str(got, "expiresAt"));
    Instant deadline = Instant.parse(str(got, "deadline"));
    assertEquals(
        Duration.between(expiresAt, deadline).toMillis(), change.get("byMs").getAsLong(), 2.0);
    assertTrue(deadline.isAfter(expiresAt), got::toString);

    String table = run(cluster, "lease", "get", "lock/billing-job").ok().out();
    List<String> extended =
        Cli.cells(table).stream()
            .filter(r -> r.get(0).equals("extended"))
            .findFirst()
            .orElseThrow();
    assertTrue(
        extended
            .get(1)
            .matches("by [0-9.]+m?s at \\S+Z: leader change \\(term \\d+\\), a full TTL from then"),
        table);

    String wide = run(cluster, "lease", "list", "--prefix", "lock/", "-o", "wide").ok().out();
    List<List<String>> rows = Cli.cells(wide);
    int column = rows.get(0).indexOf("EXTENDED");
    assertTrue(
        rows.get(1).get(column).matches("\\+[0-9.]+m?s leader change \\(term \\d+\\)"), wide);
    Cli.assertAligned(wide);
  }
}
