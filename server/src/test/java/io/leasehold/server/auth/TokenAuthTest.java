package io.leasehold.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.MetadataUtils;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.WhoAmIRequest;
import io.leasehold.proto.v1.WhoAmIResponse;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import io.leasehold.server.tls.TestCerts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bearer tokens from --auth-token-file on a node with server-side TLS only: the identity is the
 * token's, the first entry is the initial admin, a missing or unknown token is UNAUTHENTICATED, and
 * a changed file is read again without a restart.
 */
class TokenAuthTest {
  static final String ADMIN_TOKEN = "admin-token-0123456789abcdef";
  static final String RUNNER_TOKEN = "runner-token-0123456789abcdef";

  @TempDir static Path dir;
  static TestCluster cluster;
  static ManagedChannel channel;
  static Path tokens;

  @BeforeAll
  static void start() throws IOException {
    Path certs = Files.createDirectories(dir.resolve("certs"));
    TestCerts.Authority ca = TestCerts.authority(certs, "ca");
    TestCerts.node(certs, ca, "n1");
    tokens = dir.resolve("tokens.csv");
    Files.writeString(
        tokens, "# token,identity\n" + ADMIN_TOKEN + ",ops\n" + RUNNER_TOKEN + ",runner-1\n");
    cluster =
        TestCluster.start(
            1,
            dir.resolve("data"),
            b ->
                b.tlsReloadInterval(Duration.ofMillis(100))
                    .tlsCertFile(certs.resolve("n1.pem"))
                    .tlsKeyFile(certs.resolve("n1-key.pem"))
                    .authTokenFile(tokens));
    channel =
        Grpc.newChannelBuilder(
                cluster.node("n1").clientAddress(),
                TlsChannelCredentials.newBuilder().trustManager(ca.pem().toFile()).build())
            .build();
  }

  @AfterAll
  static void stop() {
    if (channel != null) {
      channel.shutdownNow();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  static Channel withToken(String token) {
    Metadata headers = new Metadata();
    headers.put(
        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    return ClientInterceptors.intercept(
        channel, MetadataUtils.newAttachHeadersInterceptor(headers));
  }

  @Test
  void theTokensIdentityIsTheCallerAndTheFirstEntryIsTheInitialAdmin() {
    WhoAmIResponse ops =
        AuthGrpc.newBlockingStub(withToken(ADMIN_TOKEN)).whoAmI(WhoAmIRequest.getDefaultInstance());
    assertEquals("ops", ops.getIdentity());
    assertEquals("token", ops.getAuthenticatedBy());
    assertTrue(
        ops.getRolesList().stream().anyMatch(r -> r.getName().equals("admin")), ops::toString);
    assertEquals(
        "runner-1",
        AuthGrpc.newBlockingStub(withToken(RUNNER_TOKEN))
            .whoAmI(WhoAmIRequest.getDefaultInstance())
            .getIdentity());
    assertEquals(
        Outcome.GRANTED,
        LeasesGrpc.newBlockingStub(withToken(ADMIN_TOKEN))
            .withDeadlineAfter(20, TimeUnit.SECONDS)
            .acquire(
                AcquireRequest.newBuilder()
                    .setName("lock/ops")
                    .setTtl(Requests.seconds(30))
                    .build())
            .getOutcome());
  }

  @Test
  void noTokenOrAnUnknownOneIsUnauthenticated() {
    StatusRuntimeException none =
        assertThrows(
            StatusRuntimeException.class,
            () -> LeasesGrpc.newBlockingStub(channel).get(Requests.get("lock/x")));
    assertEquals(Status.Code.UNAUTHENTICATED, none.getStatus().getCode());
    assertTrue(none.getStatus().getDescription().contains("bearer token"), none::toString);
    StatusRuntimeException unknown =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                LeasesGrpc.newBlockingStub(withToken("not-a-known-token-at-all"))
                    .get(Requests.get("lock/x")));
    assertEquals(Status.Code.UNAUTHENTICATED, unknown.getStatus().getCode());
    StatusRuntimeException roleless =
        assertThrows(
            StatusRuntimeException.class,
            () -> LeasesGrpc.newBlockingStub(withToken(RUNNER_TOKEN)).get(Requests.get("lock/x")));
    assertEquals(
        Status.Code.PERMISSION_DENIED,
        roleless.getStatus().getCode(),
        "authenticated, but holds no role");
  }

  @Test
  void aChangedTokenFileIsReadAgainWithoutARestart() throws IOException {
    String original = Files.readString(tokens);
    try {
      rotate();
    } finally {
      Path back = dir.resolve("tokens.back");
      Files.writeString(back, original);
      TestCerts.replace(back, tokens);
      TestCluster.await(
          "the original tokens are back",
          Duration.ofSeconds(20),
          () -> accepted(RUNNER_TOKEN, "runner-1"));
    }
  }

  private static boolean accepted(String token, String identity) {
    try {
      return AuthGrpc.newBlockingStub(withToken(token))
          .whoAmI(WhoAmIRequest.getDefaultInstance())
          .getIdentity()
          .equals(identity);
    } catch (StatusRuntimeException e) {
      return false;
    }
  }

  private void rotate() throws IOException {
    String rotated = "rotated-token-0123456789abcdef";
    Path next = dir.resolve("tokens.next");
    Files.writeString(next, ADMIN_TOKEN + ",ops\n" + rotated + ",runner-2\n");
    TestCerts.replace(next, tokens);
    TestCluster.await(
        "the new token is accepted", Duration.ofSeconds(20), () -> accepted(rotated, "runner-2"));
    StatusRuntimeException gone =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                AuthGrpc.newBlockingStub(withToken(RUNNER_TOKEN))
                    .whoAmI(WhoAmIRequest.getDefaultInstance()));
    assertEquals(
        Status.Code.UNAUTHENTICATED,
        gone.getStatus().getCode(),
        "a token taken out of the file no longer works");
    assertFalse(
        gone.getStatus().getDescription().contains(RUNNER_TOKEN), "the token is not echoed");
  }
}
