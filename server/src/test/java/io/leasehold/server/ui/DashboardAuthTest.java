package io.leasehold.server.ui;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.leasehold.proto.v1.AddRoleRequest;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.AuthRole;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Permission;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With authentication on, the dashboard asks for the identity the gRPC API asks for (here a bearer
 * token) and applies the same rules: a reader role at least, over the prefixes it reads.
 */
class DashboardAuthTest {
  static final String ADMIN = "admin-token-0123456789abcdef";
  static final String ROLELESS = "roleless-token-0123456789abcdef";
  static final String TEAM_A = "team-a-token-0123456789abcdef";

  @TempDir static Path dir;
  static TestCluster cluster;
  static LeaseholdNode node;

  @BeforeAll
  static void start() throws IOException {
    Path tokens = dir.resolve("tokens.csv");
    Files.writeString(
        tokens, ADMIN + ",ops\n" + ROLELESS + ",nobody\n" + TEAM_A + ",team-a-viewer\n");
    cluster =
        TestCluster.start(1, dir.resolve("data"), b -> b.metricsPort(0).authTokenFile(tokens));
    node = cluster.node("n1");
    TestCluster.await(
        "the initial admin holds the admin role",
        Duration.ofSeconds(20),
        () -> {
          try {
            admin(AuthGrpc.newBlockingStub(withToken(ADMIN)))
                .addRole(
                    AddRoleRequest.newBuilder()
                        .setRole(
                            AuthRole.newBuilder()
                                .setName("team-a-reader")
                                .setPermission(Permission.READER)
                                .addPrefixes("team-a/"))
                        .build());
            return true;
          } catch (RuntimeException e) {
            return false;
          }
        });
    admin(AuthGrpc.newBlockingStub(withToken(ADMIN)))
        .grantRole(
            GrantRoleRequest.newBuilder()
                .setIdentity("team-a-viewer")
                .setRole("team-a-reader")
                .build());
    LeasesGrpc.LeasesBlockingStub leases =
        LeasesGrpc.newBlockingStub(withToken(ADMIN)).withDeadlineAfter(20, TimeUnit.SECONDS);
    assertEquals(
        Outcome.GRANTED, leases.acquire(Requests.acquire("team-a/job", "ops", 60)).getOutcome());
    assertEquals(
        Outcome.GRANTED, leases.acquire(Requests.acquire("team-b/job", "ops", 60)).getOutcome());
  }

  private static AuthGrpc.AuthBlockingStub admin(AuthGrpc.AuthBlockingStub stub) {
    return stub.withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static Channel withToken(String token) {
    Metadata headers = new Metadata();
    headers.put(
        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return ClientInterceptors.intercept(
        cluster.channel("n1"), MetadataUtils.newAttachHeadersInterceptor(headers));
  }

  private static int status(String path, String token) {
    return DashboardHttp.get(node, path, Optional.ofNullable(token)).status();
  }

  @Test
  void noIdentityIs401AndATokenWithoutARoleIs403() {
    assertEquals(401, status("/ui/api/cluster", null));
    assertEquals(401, status("/ui/api/cluster", "not-a-known-token-at-all"));
    assertEquals(403, status("/ui/api/cluster", ROLELESS));
    assertEquals(403, status("/ui/api/leases?prefix=team-a/", ROLELESS));
    assertEquals(200, status("/ui/api/cluster", ADMIN));
    // Open: no identity asked. 503 until the health check has judged the node serving.
    TestCluster.await(
        "/healthz answers 200 without an identity",
        Duration.ofSeconds(10),
        () -> TestCluster.httpGet(node, "/healthz").statusCode() == 200);
    assertEquals(200, TestCluster.httpGet(node, "/metrics").statusCode(), "/metrics stays open");
  }

  @Test
  void aReaderLimitedToAPrefixReadsOnlyThatPrefix() {
    DashboardHttp.Reply mine =
        DashboardHttp.get(node, "/ui/api/leases?prefix=team-a/", Optional.of(TEAM_A));
    assertEquals(200, mine.status(), mine.body()::toString);
    assertEquals(
        "team-a/job",
        mine.body().getAsJsonArray("leases").get(0).getAsJsonObject().get("name").getAsString());
    DashboardHttp.Reply everything = DashboardHttp.get(node, "/ui/api/leases", Optional.of(TEAM_A));
    assertEquals(403, everything.status());
    assertTrue(
        everything.body().get("error").getAsString().contains("team-a-viewer has no reader role"),
        everything.body()::toString);
    assertEquals(403, status("/ui/api/leases?prefix=team-b/", TEAM_A));
    assertEquals(403, status("/ui/api/lease?name=team-b/job", TEAM_A));
    assertEquals(403, status("/ui/api/events?prefix=team-b/", TEAM_A));
    assertEquals(
        200, status("/ui/api/cluster", TEAM_A), "a reader of some names sees the cluster page");

    DashboardHttp.Reply lease =
        DashboardHttp.get(node, "/ui/api/lease?name=team-a/job", Optional.of(TEAM_A));
    assertEquals(200, lease.status());
    assertTrue(lease.body().get("found").getAsBoolean());
    assertFalse(lease.body().has("history"), "history is an admin read");
    assertTrue(
        lease.body().get("historyError").getAsString().contains("admin"), lease.body()::toString);
    assertTrue(
        DashboardHttp.get(node, "/ui/api/lease?name=team-a/job", Optional.of(ADMIN))
            .body()
            .has("history"));
  }
}
