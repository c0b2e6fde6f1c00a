package io.leasehold.server.tls;

import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import io.leasehold.server.TlsFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Optional;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * One transport's key and trust managers (grpc-java's reloadable ones), loaded from PEM files and
 * loaded again by {@link #reload} when the files' contents change. A set that does not load (a key
 * that does not match the certificate, half-written files) is refused and the managers keep what
 * they had, so a rotation written one file at a time never leaves the node without a working pair.
 * Handshakes after a reload use the new files; open connections keep theirs.
 */
public final class ReloadingTls {
  private final String option;
  private final TlsFiles files;
  private final AdvancedTlsX509KeyManager keyManager = new AdvancedTlsX509KeyManager();
  private final Optional<AdvancedTlsX509TrustManager> trustManager;
  private byte[][] applied;
  private byte[][] refused;

  private ReloadingTls(
      String option, TlsFiles files, Optional<AdvancedTlsX509TrustManager> trustManager) {
    this.option = option;
    this.files = files;
    this.trustManager = trustManager;
  }

  /**
   * Loads {@code files}; {@code option} ({@code tls} or {@code peer-tls}) names them in errors, as
   * {@code tls-cert-file: ...}.
   *
   * @throws IllegalArgumentException naming the option whose file does not load
   */
  public static ReloadingTls load(String option, TlsFiles files) {
    Optional<AdvancedTlsX509TrustManager> trust = Optional.empty();
    if (files.ca().isPresent()) {
      try {
        // On the connecting side the peer's certificate must also name the host dialled; a
        // server verifies a client's chain only.
        trust =
            Optional.of(
                AdvancedTlsX509TrustManager.newBuilder()
                    .setVerification(
                        AdvancedTlsX509TrustManager.Verification
                            .CERTIFICATE_AND_HOST_NAME_VERIFICATION)
                    .build());
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("the JDK has no X.509 trust manager", e);
      }
    }
    ReloadingTls tls = new ReloadingTls(option, files, trust);
    tls.reload();
    return tls;
  }

  public X509ExtendedKeyManager keyManager() {
    return keyManager;
  }

  /** Present when the transport verifies the other side's certificate. */
  public Optional<X509ExtendedTrustManager> trustManager() {
    return trustManager.map(t -> t);
  }

  public TlsFiles files() {
    return files;
  }

  /**
   * Reads the files and applies them if their contents changed since they were last applied.
   * Returns whether they were applied; a changed set that does not load is refused once with an
   * IllegalArgumentException naming the option, and again only after it changes once more.
   */
  public synchronized boolean reload() {
    byte[][] now =
        new byte[][] {
          read(option + "-cert-file", files.cert()),
          read(option + "-key-file", files.key()),
          files.ca().map(ca -> read(option + "-ca-file", ca)).orElse(new byte[0])
        };
    if (Arrays.deepEquals(now, applied) || Arrays.deepEquals(now, refused)) {
      return false;
    }
    try {
      apply(now);
      applied = now;
      refused = null;
      return true;
    } catch (IllegalArgumentException e) {
      refused = now;
      throw e;
    }
  }

  private void apply(byte[][] contents) {
    X509Certificate[] chain = certificates(option + "-cert-file", files.cert(), contents[0]);
    PrivateKey key;
    try {
      key = Pem.privateKey(contents[1]);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(
          option + "-key-file: " + files.key() + " " + e.getMessage());
    }
    if (!Pem.matches(key, chain[0])) {
      throw new IllegalArgumentException(
          option
              + "-key-file: "
              + files.key()
              + " is not the private key of the certificate in "
              + files.cert()
              + " ("
              + chain[0].getSubjectX500Principal()
              + ")");
    }
    X509Certificate[] cas =
        files.ca().map(ca -> certificates(option + "-ca-file", ca, contents[2])).orElse(null);
    keyManager.updateIdentityCredentials(chain, key);
    if (cas != null) {
      try {
        trustManager.orElseThrow().updateTrustCredentials(cas);
      } catch (IOException | GeneralSecurityException e) {
        throw new IllegalArgumentException(
            option
                + "-ca-file: "
                + files.ca().get()
                + " cannot be used as trusted CAs: "
                + e.getMessage());
      }
    }
  }

  private static X509Certificate[] certificates(String option, Path file, byte[] pem) {
    try {
      X509Certificate[] certs = Pem.certificates(pem);
      if (certs.length == 0) {
        throw new IllegalArgumentException(option + ": " + file + " holds no PEM certificate");
      }
      return certs;
    } catch (CertificateException e) {
      throw new IllegalArgumentException(option + ": " + file + " " + e.getMessage());
    }
  }

  private static byte[] read(String option, Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new IllegalArgumentException(option + ": cannot read " + file + " (" + e + ")");
    }
  }
}
