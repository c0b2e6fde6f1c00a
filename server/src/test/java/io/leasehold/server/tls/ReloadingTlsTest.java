package io.leasehold.server.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.TlsFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Loading and reloading one transport's PEM files, and what an operator is told when they are
 * wrong.
 */
class ReloadingTlsTest {
  @TempDir Path dir;

  static X509Certificate[] served(ReloadingTls tls) {
    String alias = tls.keyManager().chooseEngineServerAlias("EC", null, null);
    return tls.keyManager().getCertificateChain(alias);
  }

  static String error(Runnable r) {
    return assertThrows(IllegalArgumentException.class, r::run).getMessage();
  }

  @Test
  void filesAreAppliedAgainOnlyWhenTheirContentsChange() throws Exception {
    TestCerts.Authority ca = TestCerts.authority(dir, "ca");
    TestCerts.Identity first = TestCerts.node(Files.createDirectories(dir.resolve("a")), ca, "n1");
    TestCerts.Identity second = TestCerts.node(Files.createDirectories(dir.resolve("b")), ca, "n1");
    Path cert = dir.resolve("n1.pem");
    Path key = dir.resolve("n1-key.pem");
    Files.copy(first.certFile(), cert);
    Files.copy(first.keyFile(), key);
    ReloadingTls tls = ReloadingTls.load("tls", new TlsFiles(cert, key, Optional.of(ca.pem())));
    assertArrayEquals(new X509Certificate[] {first.cert()}, served(tls));
    assertTrue(tls.trustManager().isPresent());
    assertFalse(tls.reload(), "unchanged files are not applied again");

    TestCerts.replace(second.certFile(), cert);
    TestCerts.replace(second.keyFile(), key);
    assertTrue(tls.reload());
    assertArrayEquals(new X509Certificate[] {second.cert()}, served(tls));
  }

  @Test
  void aCertificateBesideAKeyThatIsNotItsOwnIsRefusedAndThePairInUseKept() throws Exception {
    TestCerts.Authority ca = TestCerts.authority(dir, "ca");
    TestCerts.Identity first = TestCerts.node(Files.createDirectories(dir.resolve("a")), ca, "n1");
    TestCerts.Identity second = TestCerts.node(Files.createDirectories(dir.resolve("b")), ca, "n1");
    Path cert = dir.resolve("n1.pem");
    Path key = dir.resolve("n1-key.pem");
    Files.copy(first.certFile(), cert);
    Files.copy(first.keyFile(), key);
    ReloadingTls tls =
        ReloadingTls.load("peer-tls", new TlsFiles(cert, key, Optional.of(ca.pem())));

    TestCerts.replace(second.certFile(), cert); // the key is not written yet
    assertTrue(
        error(tls::reload)
            .startsWith(
                "peer-tls-key-file: "
                    + key
                    + " is not the private key of the certificate in "
                    + cert));
    assertArrayEquals(new X509Certificate[] {first.cert()}, served(tls), "the pair in use stays");
    assertFalse(tls.reload(), "the same refused set is refused once");

    TestCerts.replace(second.keyFile(), key);
    assertTrue(tls.reload());
    assertArrayEquals(new X509Certificate[] {second.cert()}, served(tls));
  }

  @Test
  void filesThatDoNotLoadAreNamedByTheirOption() throws Exception {
    TestCerts.Authority ca = TestCerts.authority(dir, "ca");
    TestCerts.Identity id = TestCerts.node(dir, ca, "n1");
    TestCerts.Identity other =
        TestCerts.node(Files.createDirectories(dir.resolve("other")), ca, "n2");
    Path missing = dir.resolve("missing.pem");
    Path notPem = Files.writeString(dir.resolve("not.pem"), "hello\n");
    Path sec1 =
        Files.writeString(
            dir.resolve("sec1.pem"),
            "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n");
    Path encrypted =
        Files.writeString(
            dir.resolve("enc.pem"),
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n");

    assertTrue(
        error(() -> ReloadingTls.load("tls", new TlsFiles(missing, id.keyFile(), Optional.empty())))
            .startsWith("tls-cert-file: cannot read " + missing));
    assertEquals(
        "tls-cert-file: " + notPem + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
        error(
            () -> ReloadingTls.load("tls", new TlsFiles(notPem, id.keyFile(), Optional.empty()))));
    assertEquals(
        "peer-tls-ca-file: " + notPem + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
        error(
            () ->
                ReloadingTls.load(
                    "peer-tls", new TlsFiles(id.certFile(), id.keyFile(), Optional.of(notPem)))));
    assertTrue(
        error(() -> ReloadingTls.load("tls", new TlsFiles(id.certFile(), sec1, Optional.empty())))
            .startsWith(
                "tls-key-file: " + sec1 + " holds a PKCS#1/SEC1 key; convert it to PKCS#8"));
    assertTrue(
        error(
                () ->
                    ReloadingTls.load(
                        "tls", new TlsFiles(id.certFile(), encrypted, Optional.empty())))
            .startsWith("tls-key-file: " + encrypted + " holds an encrypted key"));
    assertEquals(
        "tls-key-file: "
            + id.certFile()
            + " holds no PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----)",
        error(
            () ->
                ReloadingTls.load(
                    "tls", new TlsFiles(id.certFile(), id.certFile(), Optional.empty()))));
    assertTrue(
        error(
                () ->
                    ReloadingTls.load(
                        "tls", new TlsFiles(id.certFile(), other.keyFile(), Optional.empty())))
            .startsWith(
                "tls-key-file: "
                    + other.keyFile()
                    + " is not the private key of the certificate in "
                    + id.certFile()));
  }
}
