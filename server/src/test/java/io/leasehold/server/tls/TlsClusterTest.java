package io.leasehold.server.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three nodes with mutual TLS on the client port and the Raft port and client certificates
 * required: who is served and who is refused, and the metrics port over HTTPS (n3's over plain
 * HTTP, as {@code --metrics-plaintext} asks).
 */
class TlsClusterTest {
  @TempDir static Path dir;
  static TestCluster cluster;
  static TestCerts.Authority ca;
  static TestCerts.Authority otherCa;
  static TestCerts.Identity client;

  @BeforeAll
  static void start() throws IOException {
    Path certs = Files.createDirectories(dir.resolve("certs"));
    ca = TestCerts.authority(certs, "ca");
    otherCa = TestCerts.authority(certs, "other-ca");
    for (String id : new String[] {"n1", "n2", "n3"}) {
      TestCerts.node(certs, ca, id);
    }
    client = TestCerts.node(certs, ca, "runner-1");
    cluster =
        TestCluster.start(
            3,
            dir.resolve("data"),
            (id, b) ->
                b.metricsPort(0)
                    .tlsCertFile(certs.resolve(id + ".pem"))
                    .tlsKeyFile(certs.resolve(id + "-key.pem"))
                    .tlsCaFile(ca.pem())
                    .clientCertAuth(true)
                    .metricsPlaintext(id.equals("n3"))
                    .initialAdmin("runner-1")
                    .peerTlsCertFile(certs.resolve(id + ".pem"))
                    .peerTlsKeyFile(certs.resolve(id + "-key.pem"))
                    .peerTlsCaFile(ca.pem()));
    cluster.useCredentials(TestCerts.credentials(ca, client));
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aClientWithAValidCertificateIsServedByEveryNode() {
    // Writes sent to followers reach the leader through the nodes' Raft clients, over peer TLS.
    for (String id : cluster.ids()) {
      AcquireResponse r =
          cluster.leases(id).acquire(Requests.acquire("valid/" + id, "runner-1", 30));
      assertEquals(Outcome.GRANTED, r.getOutcome(), id + ": " + r);
    }
    cluster.awaitConverged();
    for (String id : cluster.ids()) {
      assertTrue(
          cluster.leases(id).get(Requests.staleGet("valid/n1")).getFound(),
          id + " applied the write");
    }
  }

  @Test
  void aClientWithoutACertificateIsRefused() {
    assertRefused(TestCerts.credentials(ca, null), "nocert/x");
  }

  @Test
  void aClientWithAnUntrustedCertificateIsRefused() throws IOException {
    Path certs = Files.createDirectories(dir.resolve("untrusted"));
    assertRefused(
        TestCerts.credentials(ca, TestCerts.node(certs, otherCa, "mallory")), "untrusted/x");
  }

  @Test
  void aClientWithAnExpiredCertificateIsRefused() throws IOException {
    Path certs = Files.createDirectories(dir.resolve("expired"));
    assertRefused(
        TestCerts.credentials(ca, TestCerts.expired(certs, ca, "runner-old")), "expired/x");
  }

  @Test
  void aPlaintextClientIsRefused() {
    assertRefused(InsecureChannelCredentials.create(), "plaintext/x");
  }

  @Test
  void aClientThatDoesNotTrustTheNodesCaRefusesToTalkToThem() {
    assertRefused(TestCerts.credentials(otherCa, client), "server-auth/x");
  }

  @Test
  void metricsAndHealthAreServedOverHttpsToAClientWithACertificateOnly() {
    LeaseholdNode node = cluster.node("n1");
    HttpResponse<String> health = get(TestCerts.sslContext(ca, client), "https", node, "/healthz");
    assertEquals(200, health.statusCode());
    assertEquals("SERVING\n", health.body());
    HttpResponse<String> metrics = get(TestCerts.sslContext(ca, client), "https", node, "/metrics");
    assertEquals(200, metrics.statusCode());
    assertTrue(metrics.body().contains("leasehold_raft_term "), metrics.body());

    assertThrows(
        IOException.class,
        () -> send(TestCerts.sslContext(ca, null), "https", node, "/healthz"),
        "no client certificate");
    assertThrows(
        IOException.class,
        () -> send(TestCerts.sslContext(otherCa, client), "https", node, "/healthz"),
        "untrusted server");
    assertThrows(IOException.class, () -> send(null, "http", node, "/healthz"), "plain HTTP");
  }

  @Test
  void aPlaintextMetricsPortServesHealthWithoutACertificateWhileTheClientPortStillRequiresOne()
      throws InterruptedException {
    LeaseholdNode node = cluster.node("n3");
    assertFalse(node.metricsTls());
    assertTrue(node.clientTls());
    // n3 may still be catching up with the others' first entries: SERVING within a deadline.
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    HttpResponse<String> health = get(null, "http", node, "/healthz");
    while (health.statusCode() != 200 && System.nanoTime() - deadline < 0) {
      TimeUnit.MILLISECONDS.sleep(100);
      health = get(null, "http", node, "/healthz");
    }
    assertEquals(200, health.statusCode(), health.body());
    assertEquals("SERVING\n", health.body());
    HttpResponse<String> metrics = get(null, "http", node, "/metrics");
    assertEquals(200, metrics.statusCode());
    assertTrue(metrics.body().contains("leasehold_health_serving 1"), metrics.body());
    assertThrows(
        IOException.class,
        () -> send(TestCerts.sslContext(ca, client), "https", node, "/healthz"),
        "no TLS there");
    assertTrue(cluster.node("n1").metricsTls(), "the others keep HTTPS");
    // The client port of n3 is unchanged: no certificate, no call (assertRefused tries every node).
    assertRefused(TestCerts.credentials(ca, null), "metrics-plaintext/no-cert");
  }

  /** A call with {@code credentials} fails UNAVAILABLE on every node, and nothing was written. */
  static void assertRefused(ChannelCredentials credentials, String name) {
    for (String id : cluster.ids()) {
      ManagedChannel channel =
          Grpc.newChannelBuilder(cluster.node(id).clientAddress(), credentials).build();
      try {
        StatusRuntimeException e =
            assertThrows(
                StatusRuntimeException.class,
                () ->
                    LeasesGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(20, TimeUnit.SECONDS)
                        .acquire(Requests.acquire(name, "runner-1", 30)));
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), id + ": " + e);
      } finally {
        channel.shutdownNow();
      }
    }
    assertFalse(
        cluster.leases("n1").get(Requests.get(name)).getFound(), name + " was not acquired");
  }

  static HttpResponse<String> get(
      SSLContext context, String scheme, LeaseholdNode node, String path) {
    try {
      return send(context, scheme, node, path);
    } catch (IOException e) {
      throw new AssertionError(scheme + " " + path + " on " + node.id(), e);
    }
  }

  static HttpResponse<String> send(
      SSLContext context, String scheme, LeaseholdNode node, String path) throws IOException {
    HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10));
    if (context != null) {
      b.sslContext(context);
    }
    URI uri = URI.create(scheme + "://127.0.0.1:" + node.metricsPort().orElseThrow() + path);
    try {
      return b.build()
          .send(
              HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
