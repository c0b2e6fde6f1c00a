package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettySslContextChannelCredentials;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.leasehold.server.TestCluster;
import io.leasehold.server.tls.TestCerts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The builder's tls(...) against nodes with TLS: mutual, server-only, and what bad files say. */
class TlsClientTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  TestCerts.Authority certs(boolean clientCertAuth) throws Exception {
    Path certs = Files.createDirectories(dir.resolve("certs"));
    TestCerts.Authority ca = TestCerts.authority(certs, "ca");
    TestCerts.node(certs, ca, "n1");
    TestCerts.node(certs, ca, "runner-1");
    cluster =
        TestCluster.start(
            1,
            dir.resolve("data"),
            b -> {
              b.tlsCertFile(certs.resolve("n1.pem")).tlsKeyFile(certs.resolve("n1-key.pem"));
              return clientCertAuth
                  ? b.tlsCaFile(ca.pem()).clientCertAuth(true).initialAdmin("runner-1")
                  : b;
            });
    return ca;
  }

  @Test
  void aClientWithItsCertificateHoldsAndReleasesALeaseWhereClientCertificatesAreRequired()
      throws Exception {
    TestCerts.Authority ca = certs(true);
    Path certs = ca.pem().getParent();
    try (LeaseholdClient client =
        Fixtures.client(
            cluster,
            b ->
                b.holder("runner-1")
                    .tls(
                        ca.pem(),
                        certs.resolve("runner-1.pem"),
                        certs.resolve("runner-1-key.pem")))) {
      Lease lease = client.blocking().acquire("tls/mutual", Fixtures.ttl(10));
      assertTrue(lease.isValid());
      lease.release().get(10, TimeUnit.SECONDS);
      assertTrue(client.blocking().get("tls/mutual").isEmpty());
    }
    try (LeaseholdClient serverOnly =
        Fixtures.client(cluster, b -> b.tls(ca.pem()).requestTimeout(Duration.ofSeconds(2)))) {
      assertThrows(
          ClusterUnavailableException.class,
          () -> serverOnly.blocking().tryAcquire("tls/no-cert", Fixtures.ttl(10)),
          "a client without a certificate is refused");
    }
  }

  @Test
  void aNettySslContextOfTheCallersOwnGoesInThroughCredentials() throws Exception {
    TestCerts.Authority ca = certs(true);
    Path certs = ca.pem().getParent();
    SslContext ssl =
        GrpcSslContexts.forClient()
            .trustManager(ca.pem().toFile())
            .keyManager(
                certs.resolve("runner-1.pem").toFile(), certs.resolve("runner-1-key.pem").toFile())
            .build();
    try (LeaseholdClient client =
        Fixtures.client(
            cluster,
            b -> b.holder("runner-1").credentials(NettySslContextChannelCredentials.create(ssl)))) {
      Lease lease = client.blocking().acquire("tls/ssl-context", Fixtures.ttl(10));
      assertEquals("runner-1", lease.holder());
      lease.release().get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void serverOnlyTlsNeedsJustTheCaAndPlaintextIsRefused() throws Exception {
    TestCerts.Authority ca = certs(false);
    try (LeaseholdClient client = Fixtures.client(cluster, b -> b.tls(ca.pem()))) {
      assertTrue(client.blocking().tryAcquire("tls/server-only", Fixtures.ttl(10)).isGranted());
    }
    try (LeaseholdClient plaintext =
        Fixtures.client(cluster, b -> b.requestTimeout(Duration.ofSeconds(2)))) {
      assertThrows(
          ClusterUnavailableException.class,
          () -> plaintext.blocking().tryAcquire("tls/plain", Fixtures.ttl(10)));
    }
  }

  @Test
  void badFilesAreRefusedByTheBuilderNamingTheArgument() throws Exception {
    TestCerts.Authority ca = TestCerts.authority(dir, "ca");
    TestCerts.Identity id = TestCerts.node(dir, ca, "runner-1");
    Path missing = dir.resolve("missing.pem");
    LeaseholdClientBuilder b = LeaseholdClient.builder();
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> b.tls(missing))
            .getMessage()
            .startsWith("tls: cannot read caCert " + missing));
    assertEquals(
        "tls: cert " + id.keyFile() + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
        assertThrows(
                IllegalArgumentException.class, () -> b.tls(ca.pem(), id.keyFile(), id.keyFile()))
            .getMessage());
    assertEquals(
        "tls: key "
            + id.certFile()
            + " holds no PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----)",
        assertThrows(
                IllegalArgumentException.class, () -> b.tls(ca.pem(), id.certFile(), id.certFile()))
            .getMessage());
  }
}
