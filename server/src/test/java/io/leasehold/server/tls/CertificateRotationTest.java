package io.leasehold.server.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Certificates, keys and CAs replaced on disk reach every port of a running node: the client port,
 * the metrics port and the Raft port serve the new certificate and trust the new CA.
 */
class CertificateRotationTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void rotatedCertificatesKeysAndCasArePickedUpWithoutARestart() throws Exception {
    Path oldCerts = Files.createDirectories(dir.resolve("old"));
    Path newCerts = Files.createDirectories(dir.resolve("new"));
    Path live = Files.createDirectories(dir.resolve("live"));
    TestCerts.Authority oldCa = TestCerts.authority(oldCerts, "ca");
    TestCerts.Authority newCa = TestCerts.authority(newCerts, "ca");
    TestCerts.Identity oldNode = TestCerts.node(oldCerts, oldCa, "n1");
    TestCerts.Identity newNode = TestCerts.node(newCerts, newCa, "n1");
    TestCerts.Identity oldClient = TestCerts.node(oldCerts, oldCa, "runner-1");
    TestCerts.Identity newClient = TestCerts.node(newCerts, newCa, "runner-1");
    Path cert = live.resolve("n1.pem");
    Path key = live.resolve("n1-key.pem");
    Path ca = live.resolve("ca.pem");
    Files.copy(oldNode.certFile(), cert);
    Files.copy(oldNode.keyFile(), key);
    Files.copy(oldCa.pem(), ca);
    cluster =
        TestCluster.start(
            1,
            dir.resolve("data"),
            b ->
                b.metricsPort(0)
                    .tlsReloadInterval(Duration.ofMillis(100))
                    .tlsCertFile(cert)
                    .tlsKeyFile(key)
                    .tlsCaFile(ca)
                    .clientCertAuth(true)
                    .initialAdmin("runner-1")
                    .peerTlsCertFile(cert)
                    .peerTlsKeyFile(key)
                    .peerTlsCaFile(ca));
    LeaseholdNode node = cluster.node("n1");
    int peerPort = cluster.peer("n1").peerPort();
    int metricsPort = node.metricsPort().orElseThrow();

    assertEquals(Outcome.GRANTED, acquire(node, oldCa, oldClient, "before/x"));
    assertThrows(StatusRuntimeException.class, () -> acquire(node, newCa, newClient, "before/y"));
    assertEquals(oldNode.cert(), served(peerPort, TestCerts.sslContext(oldCa, oldClient)));

    // Each file replaced as a rotation tool does; the node may see any mix of old and new for a
    // moment, and must end up on the new set.
    TestCerts.replace(newCa.pem(), ca);
    TestCerts.replace(newNode.certFile(), cert);
    TestCerts.replace(newNode.keyFile(), key);

    SSLContext rotated = TestCerts.sslContext(newCa, newClient);
    TestCluster.await(
        "the client port serves the new certificate and trusts the new CA",
        Duration.ofSeconds(30),
        () -> {
          try {
            return acquire(node, newCa, newClient, "after/x") == Outcome.GRANTED;
          } catch (StatusRuntimeException notYet) {
            return false;
          }
        });
    assertEquals(newNode.cert(), served(node.config().self().clientPort(), rotated));
    assertEquals(
        newNode.cert(),
        served(metricsPort, rotated),
        "the metrics port serves the new certificate");
    assertEquals(
        newNode.cert(), served(peerPort, rotated), "the Raft port serves the new certificate");
    assertThrows(
        StatusRuntimeException.class,
        () -> acquire(node, newCa, oldClient, "after/y"),
        "a client certificate of the old CA is no longer accepted");
    // The node's own Raft client reaches the Raft port through the rotation: writes go on.
    assertEquals(Outcome.GRANTED, acquire(node, newCa, newClient, "after/z"));
  }

  static Outcome acquire(
      LeaseholdNode node, TestCerts.Authority trust, TestCerts.Identity id, String name) {
    ManagedChannel channel =
        Grpc.newChannelBuilder(node.clientAddress(), TestCerts.credentials(trust, id)).build();
    try {
      return LeasesGrpc.newBlockingStub(channel)
          .withDeadlineAfter(20, TimeUnit.SECONDS)
          .acquire(Requests.acquire(name, "runner-1", 30))
          .getOutcome();
    } finally {
      channel.shutdownNow();
    }
  }

  /**
   * The certificate a TLS port presents to a client with {@code context}; fails if the client does
   * not trust it.
   */
  static X509Certificate served(int port, SSLContext context) throws IOException {
    try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      socket.setSoTimeout(10_000);
      SSLParameters p = socket.getSSLParameters();
      p.setApplicationProtocols(new String[] {"h2", "http/1.1"});
      p.setServerNames(java.util.List.of(new SNIHostName("localhost")));
      socket.setSSLParameters(p);
      socket.startHandshake();
      return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }
  }
}
