package io.leasehold.cli;

import static io.leasehold.cli.Cli.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.leasehold.server.TestCluster;
import io.leasehold.server.tls.TestCerts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code leasehold auth …} and {@code leasehold audit} against a node that authenticates by client
 * certificate.
 */
class AuthCommandTest {
  @TempDir static Path dir;
  static TestCluster cluster;
  static Path certs;

  @BeforeAll
  static void start() throws Exception {
    certs = Files.createDirectories(dir.resolve("certs"));
    TestCerts.Authority ca = TestCerts.authority(certs, "ca");
    TestCerts.Identity n1 = TestCerts.node(certs, ca, "n1");
    TestCerts.node(certs, ca, "admin");
    TestCerts.node(certs, ca, "runner-1");
    cluster =
        TestCluster.start(1, dir.resolve("data"), b -> TestCerts.mutualTls(b, n1, ca, "admin"));
    // The leader records the initial admin's grant once it leads; until then admin is one by
    // configuration only.
    TestCluster.await(
        "the initial admin's grant is recorded",
        java.time.Duration.ofSeconds(20),
        () -> run(as("admin", "auth", "list", "admin", "-o", "json")).out().contains("\"admin\""));
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  static String[] as(String identity, String... args) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--cacert",
                certs.resolve("ca.pem").toString(),
                "--cert",
                certs.resolve(identity + ".pem").toString(),
                "--key",
                certs.resolve(identity + "-key.pem").toString()));
    all.addAll(List.of(args));
    return Cli.at(cluster, all.toArray(String[]::new));
  }

  @Test
  void anAdminGivesARunnerARoleOverAPrefixAndTheAuditHistoryShowsIt() {
    JsonObject me = run(as("admin", "auth", "whoami", "-o", "json")).ok().object();
    assertEquals("admin", me.get("identity").getAsString());
    assertEquals("certificate", me.get("authenticatedBy").getAsString());

    JsonObject role =
        run(as(
                "admin",
                "auth",
                "role",
                "add",
                "runners",
                "--permission",
                "client",
                "--prefix",
                "mailbox/",
                "-o",
                "json"))
            .ok()
            .object();
    assertEquals("client", role.get("permission").getAsString());
    assertEquals("mailbox/", role.getAsJsonArray("prefixes").get(0).getAsString());
    run(as("admin", "auth", "grant", "runner-1", "runners")).ok();
    JsonArray grants = run(as("admin", "auth", "list", "-o", "json")).ok().array();
    assertTrue(
        grants.toString().contains("{\"identity\":\"runner-1\",\"roles\":[\"runners\"]}"),
        grants::toString);

    // The runner acquires as itself (its certificate's identity is the default holder) under
    // mailbox/ only.
    JsonObject acquired =
        run(as("runner-1", "lease", "acquire", "mailbox/1", "--ttl", "30s", "-o", "json"))
            .ok()
            .object();
    assertEquals("runner-1", acquired.get("holder").getAsString());
    run(as("runner-1", "lease", "acquire", "lock/x", "--ttl", "30s"))
        .failed(
            LeaseholdCommand.EXIT_FAILED,
            "PERMISSION_DENIED: runner-1 has no client role over lock/x");
    run(as("runner-1", "auth", "grant", "runner-1", "admin"))
        .failed(LeaseholdCommand.EXIT_FAILED, "PERMISSION_DENIED");
    run(as("admin", "auth", "revoke", "admin", "admin"))
        .failed(LeaseholdCommand.EXIT_FAILED, "FAILED_PRECONDITION");
    run(as("admin", "auth", "role", "remove", "runners"))
        .failed(LeaseholdCommand.EXIT_FAILED, "revoke it first");

    JsonArray audit = run(as("admin", "audit", "--identity", "admin", "-o", "json")).ok().array();
    List<String> actions = new ArrayList<>();
    for (JsonElement e : audit) {
      actions.add(e.getAsJsonObject().get("action").getAsString());
    }
    assertTrue(
        actions.containsAll(List.of("grant_role", "add_role", "revoke_role", "remove_role")),
        actions::toString);
    assertTrue(run(as("admin", "audit")).ok().out().contains("runners"));
  }

  @Test
  void theAuditHistoryNamesEveryActionInOneStyleWithReadableDetails() {
    run(as(
            "admin",
            "policy",
            "set",
            "audited",
            "--min-ttl",
            "5s",
            "--max-ttl",
            "1m",
            "--lock-delay",
            "1500ms"))
        .ok();
    run(as("runner-1", "policy", "set", "audited", "--max-ttl", "1h"))
        .failed(LeaseholdCommand.EXIT_FAILED, "PERMISSION_DENIED");
    run(as("admin", "ban", "add", "someone", "--reason", "runaway job")).ok();

    JsonObject set = latest("admin", "set_policy");
    assertEquals("audited", set.get("target").getAsString());
    assertEquals("min_ttl=5s max_ttl=1m lock_delay=1.5s", set.get("detail").getAsString());
    JsonObject denied = latest("runner-1", "set_policy");
    assertTrue(denied.get("outcome").getAsString().startsWith("denied: "), denied::toString);
    assertEquals("method=leasehold.v1.Admin/SetPolicy", denied.get("detail").getAsString());
    assertEquals("reason=\"runaway job\"", latest("admin", "ban").get("detail").getAsString());
    for (JsonElement e : run(as("admin", "audit", "--limit", "0", "-o", "json")).ok().array()) {
      String action = e.getAsJsonObject().get("action").getAsString();
      assertTrue(
          action.matches("[a-z]+(_[a-z]+)*"), "snake_case, as the API names actions: " + action);
    }
    run(as("admin", "ban", "remove", "someone")).ok();
  }

  /**
   * The newest audit record of {@code identity}'s {@code action}, once there is one (a refusal is
   * recorded after its answer).
   */
  static JsonObject latest(String identity, String action) {
    return TestCluster.eventually(
        action + " by " + identity + " in the audit history",
        java.time.Duration.ofSeconds(20),
        () -> {
          for (JsonElement e :
              run(as("admin", "audit", "--identity", identity, "-o", "json")).ok().array()) {
            if (e.getAsJsonObject().get("action").getAsString().equals(action)) {
              return java.util.Optional.of(e.getAsJsonObject());
            }
          }
          return java.util.Optional.empty();
        });
  }

  @Test
  void aBearerTokenIsTheCallersIdentity() throws Exception {
    Path tokens = dir.resolve("tokens.csv");
    Files.writeString(tokens, "ops-token-0123456789abcdef,ops\n");
    try (TestCluster tokenNode =
        TestCluster.start(
            1,
            dir.resolve("token-node"),
            b ->
                b.tlsCertFile(certs.resolve("n1.pem"))
                    .tlsKeyFile(certs.resolve("n1-key.pem"))
                    .authTokenFile(tokens))) {
      String ca = certs.resolve("ca.pem").toString();
      JsonObject me =
          run(Cli.at(
                  tokenNode,
                  "--cacert",
                  ca,
                  "--bearer-token",
                  "ops-token-0123456789abcdef",
                  "auth",
                  "whoami",
                  "-o",
                  "json"))
              .ok()
              .object();
      assertEquals("ops", me.get("identity").getAsString());
      assertEquals("token", me.get("authenticatedBy").getAsString());
      run(Cli.at(
              tokenNode,
              "--cacert",
              ca,
              "--bearer-token",
              "not-a-token-we-know-of",
              "auth",
              "whoami"))
          .failed(LeaseholdCommand.EXIT_FAILED, "UNAUTHENTICATED");
    }
  }
}
