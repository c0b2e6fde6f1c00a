package io.leasehold.jepsen.run;

import io.leasehold.jepsen.cluster.Certificates;
import io.leasehold.server.tls.TestCerts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Certificates made at run time with the server's test CA helper (EC P-256, no tool needed): a CA
 * in {@code dir}, node certificates in {@code dir/nodes}, client certificates in {@code
 * dir/clients}, each client's CN its name. Remembers which clients it issued.
 */
final class TestCertificates implements Certificates {
  private final Path nodes;
  private final Path clients;
  private final TestCerts.Authority ca;
  private final Map<String, Pair> issued = new HashMap<>();
  private final Set<String> clientNames = new TreeSet<>();

  TestCertificates(Path dir) {
    try {
      this.nodes = Files.createDirectories(dir.resolve("nodes"));
      this.clients = Files.createDirectories(dir.resolve("clients"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.ca = TestCerts.authority(dir, "ca");
  }

  @Override
  public Path ca() {
    return ca.pem();
  }

  @Override
  public synchronized Pair node(String id, String host) {
    return issued.computeIfAbsent(
        "node " + id, k -> pair(TestCerts.node(nodes, ca, id, List.of(host))));
  }

  @Override
  public synchronized Pair client(String name) {
    clientNames.add(name);
    return issued.computeIfAbsent("client " + name, k -> pair(TestCerts.node(clients, ca, name)));
  }

  /** The names of every client certificate issued so far. */
  synchronized Set<String> clientNames() {
    return Set.copyOf(clientNames);
  }

  private static Pair pair(TestCerts.Identity id) {
    return new Pair(id.certFile(), id.keyFile());
  }
}
