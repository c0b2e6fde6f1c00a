package io.leasehold.cli;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.leasehold.client.LeaseholdClientBuilder;
import io.leasehold.client.internal.TlsFiles;
import io.leasehold.server.tls.Pem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.Optional;
import javax.net.ssl.SSLContext;

/**
 * The client side of TLS, from {@code --cacert}, {@code --cert} and {@code --key} (etcdctl's
 * names): for the SDK client, a raw gRPC channel, and the nodes' metrics ports.
 */
public record ClientTls(Optional<Path> caCert, Optional<Path> cert, Optional<Path> key) {
  /** No option given: plaintext. */
  public static final ClientTls PLAINTEXT =
      new ClientTls(Optional.empty(), Optional.empty(), Optional.empty());

  /**
   * From the options' values (null or blank: not given).
   *
   * @throws IllegalArgumentException naming the option, for a lone --cert or --key, either without
   *     --cacert, or an unreadable file
   */
  public static ClientTls of(String caCert, String cert, String key) {
    Optional<Path> ca = path("--cacert", caCert);
    Optional<Path> c = path("--cert", cert);
    Optional<Path> k = path("--key", key);
    if (c.isPresent() != k.isPresent()) {
      throw new IllegalArgumentException(
          c.isPresent()
              ? "--cert: needs --key (the certificate's private key)"
              : "--key: needs --cert (the certificate it belongs to)");
    }
    if (c.isPresent() && ca.isEmpty()) {
      throw new IllegalArgumentException(
          "--cert: needs --cacert (the CA that verifies the nodes' certificates)");
    }
    return new ClientTls(ca, c, k);
  }

  private static Optional<Path> path(String option, String value) {
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    Path p = Path.of(value.trim());
    if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
      throw new IllegalArgumentException(
          option
              + ": cannot read "
              + p
              + (Files.exists(p) ? " (not a readable file)" : " (no such file)"));
    }
    return Optional.of(p);
  }

  public boolean enabled() {
    return caCert.isPresent();
  }

  public LeaseholdClientBuilder configure(LeaseholdClientBuilder b) {
    if (cert.isPresent()) {
      return b.tls(caCert.orElseThrow(), cert.get(), key.orElseThrow());
    }
    return caCert.map(b::tls).orElse(b);
  }

  /** For commands that open a gRPC channel of their own. */
  public ChannelCredentials credentials() {
    return enabled()
        ? TlsFiles.credentials(caCert.get(), cert.orElse(null), key.orElse(null))
        : InsecureChannelCredentials.create();
  }

  /** The HTTPS client side for the nodes' metrics ports, when TLS is on. */
  public Optional<SSLContext> sslContext() {
    if (!enabled()) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          Pem.sslContext(
              Pem.certificates(Files.readAllBytes(caCert.get())),
              cert.isPresent() ? Pem.privateKey(Files.readAllBytes(key.get())) : null,
              cert.isPresent() ? Pem.certificates(Files.readAllBytes(cert.get())) : null));
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "--cacert/--cert/--key: cannot be used for HTTPS: " + e.getMessage(), e);
    }
  }
}
