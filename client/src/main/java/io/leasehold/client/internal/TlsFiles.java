package io.leasehold.client.internal;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.leasehold.proto.CertificateIdentity;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Objects;
import java.util.Optional;

/**
 * TLS channel credentials from PEM files, checked when the builder is called so that a wrong path
 * or format fails there, naming the argument, instead of at the first call. Internal.
 */
public final class TlsFiles {
  private TlsFiles() {}

  /**
   * Trusts the CAs in {@code caCert}; presents {@code cert} and {@code key} unless they are null.
   */
  public static ChannelCredentials credentials(Path caCert, Path cert, Path key) {
    byte[] ca = certificates("caCert", caCert);
    TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
    try {
      b.trustManager(new ByteArrayInputStream(ca));
      if (cert != null) {
        byte[] chain = certificates("cert", cert);
        byte[] pkcs8 = read("key", key);
        if (!new String(pkcs8, StandardCharsets.US_ASCII).contains("-----BEGIN PRIVATE KEY-----")) {
          throw new IllegalArgumentException(
              "tls: key " + key + " holds no PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----)");
        }
        b.keyManager(new ByteArrayInputStream(chain), new ByteArrayInputStream(pkcs8));
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("tls: " + e.getMessage(), e);
    }
    return b.build();
  }

  /**
   * The identity a node with client-certificate authentication takes from {@code cert}: its SAN URI
   * {@code leasehold://holder/NAME} when it has one, else its subject's CN; empty if neither.
   */
  public static Optional<String> identity(Path cert) {
    byte[] pem = certificates("cert", cert);
    try {
      return CertificateIdentity.of(
          (X509Certificate)
              CertificateFactory.getInstance("X.509")
                  .generateCertificates(new ByteArrayInputStream(pem))
                  .iterator()
                  .next());
    } catch (CertificateException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "tls: cert " + cert + ": its identity cannot be read (" + e.getMessage() + ")");
    }
  }

  private static byte[] certificates(String argument, Path file) {
    byte[] pem = read(argument, file);
    try {
      if (!new String(pem, StandardCharsets.US_ASCII).contains("-----BEGIN CERTIFICATE-----")
          || CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(pem))
              .isEmpty()) {
        throw new IllegalArgumentException(
            "tls: "
                + argument
                + " "
                + file
                + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
      }
    } catch (CertificateException e) {
      throw new IllegalArgumentException(
          "tls: "
              + argument
              + " "
              + file
              + " holds a certificate that does not parse ("
              + e.getMessage()
              + ")");
    }
    return pem;
  }

  private static byte[] read(String argument, Path file) {
    Objects.requireNonNull(file, argument);
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "tls: cannot read " + argument + " " + file + " (" + e + ")");
    }
  }
}
