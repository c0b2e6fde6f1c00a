package io.leasehold.jepsen.cluster;

import java.nio.file.Path;

/**
 * The certificates of a cluster run with mutual TLS: one CA, a certificate per node and one per
 * client identity, as PEM files (keys in PKCS#8). Whoever starts the run makes them (the fault
 * tests at run time, with the server's test CA helper), so no tool is needed.
 *
 * <p>Each client identity is a certificate whose subject CN is the identity's name. The harness
 * asks for one per lease holder, with the holder's name, so that every holder the clients send is
 * also the CN of the certificate they present.
 */
public interface Certificates {
  /** A certificate (the leaf first) and its private key. */
  record Pair(Path cert, Path key) {}

  /** The CA certificate that verifies every node and every client. */
  Path ca();

  /**
   * Node {@code id}'s certificate, for its client, metrics and Raft ports alike: it names {@code
   * host} (the address members and clients dial), and serves as server and client certificate,
   * since members are both to each other.
   */
  Pair node(String id, String host);

  /** A client certificate with CN = {@code name}: made on first use, the same files after. */
  Pair client(String name);
}
