package io.leasehold.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The certificates {@link LeaseholdTls} makes, read back with the JDK's own parsers, and used for
 * real: in-JVM nodes with mutual TLS on both transports and client certificates required, as a
 * {@link LeaseholdContainer} runs with {@code withTls()}, serving the SDK with the admin's
 * certificate and with a client identity it issued.
 */
class LeaseholdTlsTest {
  private static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
  private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
  private static final int DNS = 2;
  private static final int IP = 7;

  @TempDir Path dir;

  @Test
  void aCaSignsNodeCertificatesNamingTheirIdsAliasesLocalhostAndTheDockerHost() throws Exception {
    LeaseholdTls tls =
        LeaseholdTls.create(
            dir,
            Map.of(
                "n1", List.of("n1", "tc-a1b2c3d4", "localhost"),
                "n2", List.of("tc-e5f6g7h8", "172.17.0.1")));
    assertEquals(dir, tls.directory());
    assertEquals(dir.resolve("ca.pem"), tls.caCertificate());
    X509Certificate ca = certificate(tls.caCertificate());
    assertEquals(ca, tls.caX509Certificate());
    assertTrue(ca.getBasicConstraints() >= 0, "the CA may sign certificates");
    assertTrue(ca.getKeyUsage()[5], "keyCertSign");
    ca.verify(ca.getPublicKey());

    LeaseholdTls.Identity n1 = tls.node("n1");
    assertEquals(
        new LeaseholdTls.Identity("n1", dir.resolve("n1.pem"), dir.resolve("n1-key.pem")), n1);
    X509Certificate c1 = certificate(n1.certificate());
    c1.verify(ca.getPublicKey());
    c1.checkValidity(new Date());
    assertEquals(new X500Principal("CN=n1"), c1.getSubjectX500Principal());
    assertEquals(ca.getSubjectX500Principal(), c1.getIssuerX500Principal());
    assertEquals(-1, c1.getBasicConstraints(), "not a CA");
    assertEquals(List.of(SERVER_AUTH, CLIENT_AUTH), c1.getExtendedKeyUsage());
    assertEquals(
        List.of(
            List.of(IP, "127.0.0.1"),
            List.of(DNS, "localhost"),
            List.of(DNS, "n1"),
            List.of(DNS, "tc-a1b2c3d4")),
        sans(c1));
    assertEquals(
        List.of(
            List.of(IP, "127.0.0.1"),
            List.of(DNS, "localhost"),
            List.of(DNS, "n2"),
            List.of(DNS, "tc-e5f6g7h8"),
            List.of(IP, "172.17.0.1")),
        sans(certificate(tls.node("n2").certificate())));
    assertKeyMatches(c1, n1.key());
    assertEquals(
        List.of("n1", "n2"), tls.nodeIds().stream().sorted().toList(), "every node, nothing else");
    assertThrows(IllegalArgumentException.class, () -> tls.node("n3"));
  }

  @Test
  void clientCertificatesNameTheirIdentityAndAreMadeOnce() throws Exception {
    LeaseholdTls tls = LeaseholdTls.create(dir, Map.of("n1", List.of()));
    LeaseholdTls.Identity admin = tls.admin();
    assertEquals(LeaseholdTls.ADMIN, admin.name());
    assertEquals(dir.resolve("admin.pem"), admin.certificate());
    X509Certificate adminCert = certificate(admin.certificate());
    adminCert.verify(tls.caX509Certificate().getPublicKey());
    assertEquals(new X500Principal("CN=admin"), adminCert.getSubjectX500Principal());
    assertTrue(adminCert.getExtendedKeyUsage().contains(CLIENT_AUTH));
    assertNull(adminCert.getSubjectAlternativeNames(), "a client certificate names no host");
    assertKeyMatches(adminCert, admin.key());

    LeaseholdTls.Identity worker = tls.client("worker-a");
    assertSame(worker, tls.client("worker-a"), "made once");
    assertSame(admin, tls.client("admin"));
    X509Certificate workerCert = certificate(worker.certificate());
    workerCert.verify(tls.caX509Certificate().getPublicKey());
    assertEquals(new X500Principal("CN=worker-a"), workerCert.getSubjectX500Principal());
    assertKeyMatches(workerCert, worker.key());

    for (String bad : Arrays.asList("n1", "ca", "has space", "", "-dash", null, "a".repeat(65))) {
      assertThrows(IllegalArgumentException.class, () -> tls.client(bad), String.valueOf(bad));
    }
    assertThrows(
        IllegalArgumentException.class, () -> LeaseholdTls.create(dir, Map.of("admin", List.of())));
    assertThrows(IllegalArgumentException.class, () -> LeaseholdTls.create(dir, Map.of()));
  }

  @Test
  void keysArePkcs8PemReadableByTheirOwnerOnly() throws Exception {
    LeaseholdTls tls = LeaseholdTls.create(dir, Map.of("n1", List.of()));
    for (Path key : List.of(tls.node("n1").key(), tls.admin().key())) {
      String pem = Files.readString(key, StandardCharsets.US_ASCII);
      assertTrue(pem.startsWith("-----BEGIN PRIVATE KEY-----\n"), pem);
      assertTrue(pem.endsWith("-----END PRIVATE KEY-----\n"), pem);
      if (Files.getFileStore(key).supportsFileAttributeView("posix")) {
        assertEquals(
            "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(key)));
      }
    }
    assertFalse(Files.exists(dir.resolve("ca-key.pem")), "the CA's key stays in memory");
  }

  @Test
  void subjectAltNamesTakeEachHostOnceAfterTheLoopbackNamesAndTheId() {
    assertEquals(
        List.of("127.0.0.1", "localhost", "n2", "tc-x", "host.docker.internal"),
        LeaseholdTls.subjectAltNames(
            "n2", Arrays.asList("n2", "tc-x", "", null, "localhost", " host.docker.internal ")));
    assertTrue(LeaseholdTls.isIpAddress("172.17.0.1"));
    assertTrue(LeaseholdTls.isIpAddress("::1"));
    assertFalse(LeaseholdTls.isIpAddress("localhost"));
    assertFalse(LeaseholdTls.isIpAddress("n1"));
    assertFalse(LeaseholdTls.isIpAddress("docker.example"));
  }

  @Test
  void nodesServeTheSdkWithMutualTlsOnTheseCertificates() throws Exception {
    LeaseholdTls tls =
        LeaseholdTls.create(dir.resolve("certs"), Map.of("n1", List.of(), "n2", List.of()));
    LeaseOptions minute = LeaseOptions.defaults().withTtl(Duration.ofMinutes(1));
    // As LeaseholdContainer runs a node with withTls(): each node's certificate on the client and
    // Raft ports, client certificates required, the admin certificate's identity the first admin.
    try (LeaseholdCluster cluster =
        LeaseholdCluster.builder()
            .nodes(2)
            .dataDir(dir.resolve("data"))
            .configure(
                (id, b) ->
                    b.tlsCertFile(tls.node(id).certificate())
                        .tlsKeyFile(tls.node(id).key())
                        .tlsCaFile(tls.caCertificate())
                        .clientCertAuth(true)
                        .initialAdmin(LeaseholdTls.ADMIN)
                        .peerTlsCertFile(tls.node(id).certificate())
                        .peerTlsKeyFile(tls.node(id).key())
                        .peerTlsCaFile(tls.caCertificate()))
            .start()) {
      LeaseholdTls.Identity admin = tls.admin();
      try (LeaseholdClient client =
          LeaseholdContainer.clientBuilder(cluster.addresses(), tls).build()) {
        Lease lease = client.acquire("kit/tls", minute).join();
        assertEquals(LeaseholdTls.ADMIN, lease.holder(), "the certificate's identity holds it");
        client.auth().grant("worker-a", "client").join();
      }
      LeaseholdTls.Identity worker = tls.client("worker-a");
      try (LeaseholdClient client =
          cluster
              .clientBuilder()
              .tls(tls.caCertificate(), worker.certificate(), worker.key())
              .build()) {
        assertEquals("worker-a", client.acquire("kit/worker", minute).join().holder());
      }
      try (LeaseholdClient noCertificate =
          cluster
              .clientBuilder()
              .tls(tls.caCertificate())
              .requestTimeout(Duration.ofSeconds(3))
              .build()) {
        assertThrows(RuntimeException.class, () -> noCertificate.get("kit/tls").join());
      }
      assertTrue(Files.readString(admin.certificate()).startsWith("-----BEGIN CERTIFICATE-----\n"));
    }
  }

  static X509Certificate certificate(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  static List<List<Object>> sans(X509Certificate cert) throws Exception {
    List<List<Object>> out = new ArrayList<>();
    for (List<?> san : cert.getSubjectAlternativeNames()) {
      out.add(List.of(san.get(0), san.get(1)));
    }
    return out;
  }

  /** The key file holds the private key of the certificate's public key. */
  static void assertKeyMatches(X509Certificate cert, Path keyFile) throws Exception {
    String pem = Files.readString(keyFile, StandardCharsets.US_ASCII);
    byte[] der =
        Base64.getMimeDecoder()
            .decode(
                pem.replace("-----BEGIN PRIVATE KEY-----", "")
                    .replace("-----END PRIVATE KEY-----", ""));
    PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der));
    byte[] data = "leasehold".getBytes(StandardCharsets.US_ASCII);
    Signature signer = Signature.getInstance("SHA256withECDSA");
    signer.initSign(key);
    signer.update(data);
    byte[] signature = signer.sign();
    Signature verifier = Signature.getInstance("SHA256withECDSA");
    verifier.initVerify(cert.getPublicKey());
    verifier.update(data);
    assertTrue(
        verifier.verify(signature), keyFile + " is the key of " + cert.getSubjectX500Principal());
    assertArrayEquals(der, key.getEncoded());
  }
}
