package io.leasehold.server;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * One transport's TLS material as PEM files: this node's certificate (chain), its PKCS#8 private
 * key, and the CA certificates that verify the other side's certificate, if the other side is to
 * present one.
 */
public record TlsFiles(Path cert, Path key, Optional<Path> ca) {
  public TlsFiles {
    Objects.requireNonNull(cert, "cert");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(ca, "ca");
  }
}
