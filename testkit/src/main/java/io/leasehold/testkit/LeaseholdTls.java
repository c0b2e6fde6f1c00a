package io.leasehold.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Test certificates for Leasehold nodes run with mutual TLS, made in process: a CA, a certificate
 * per node and client certificates, as PEM files in one directory laid out as {@code
 * deploy/tls/make-certs.sh} lays its out ({@code ca.pem}; {@code n1.pem} and {@code n1-key.pem}
 * ...; {@code admin.pem} and {@code admin-key.pem}). Keys are EC P-256 in PKCS#8, the form the node
 * and the SDK read. Every certificate is valid from an hour ago for seven days.
 *
 * <p>A node's certificate names {@code 127.0.0.1}, {@code localhost}, the node's id and the hosts
 * it is given (a container's network aliases, the Docker host), and serves as its server and its
 * client certificate alike, since members are both to each other. Client certificates carry their
 * identity as their subject's CN: a node with {@code --client-cert-auth} takes it as the caller's
 * identity and as the holder of its leases. {@link #admin()} is the identity the nodes are started
 * with as {@code --initial-admin}.
 *
 * <p>{@link LeaseholdContainer#withTls()} and {@link LeaseholdContainerCluster#withTls()} make one
 * when they start; {@link #create} makes one for nodes of a test's own. The certificates are made
 * with Bouncy Castle, an optional dependency of the kit: a test that uses them needs {@code
 * org.bouncycastle:bcpkix-jdk18on} on its classpath. For tests only: the CA's key stays in memory
 * and signs whatever {@link #client} is asked for.
 */
public final class LeaseholdTls {
  /** The identity of {@link #admin()}, given to the nodes as {@code --initial-admin}. */
  public static final String ADMIN = "admin";

  private static final Duration VALID_BEFORE = Duration.ofHours(1);
  private static final Duration VALID_FOR = Duration.ofDays(7);
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

  /**
   * A certificate and its private key, as PEM files.
   *
   * @param name the identity the certificate names (its CN): a node id or a client identity
   * @param certificate the certificate (PEM)
   * @param key its private key (PEM, PKCS#8)
   */
  public record Identity(String name, Path certificate, Path key) {
    /**
     * Checks that no part is missing.
     *
     * @param name the identity the certificate names
     * @param certificate the certificate file
     * @param key the private key file
     */
    public Identity {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(certificate, "certificate");
      Objects.requireNonNull(key, "key");
    }
  }

  private final Path dir;
  private final Certificates.Issued ca;
  private final Path caFile;
  private final Map<String, Identity> nodes;
  private final Map<String, Identity> clients = new LinkedHashMap<>();

  private LeaseholdTls(
      Path dir, Certificates.Issued ca, Path caFile, Map<String, Identity> nodes, Identity admin) {
    this.dir = dir;
    this.ca = ca;
    this.caFile = caFile;
    this.nodes = nodes;
    this.clients.put(ADMIN, admin);
  }

  /**
   * Makes a CA, a certificate for each node and the {@link #admin()} client certificate, and writes
   * them into {@code dir}.
   *
   * @param dir where the PEM files go; created if missing
   * @param nodes each node's id, with the further hosts (IP addresses or DNS names) its certificate
   *     names besides its id, {@code 127.0.0.1} and {@code localhost}
   * @return the certificates
   * @throws IllegalStateException if Bouncy Castle ({@code org.bouncycastle:bcpkix-jdk18on}) is not
   *     on the classpath
   * @throws IllegalArgumentException if a node id is not 1 to 64 letters, digits, {@code .}, {@code
   *     _} or {@code -} starting with a letter or digit, or is {@code ca} or {@value #ADMIN}
   */
  public static LeaseholdTls create(Path dir, Map<String, ? extends Collection<String>> nodes) {
    Objects.requireNonNull(dir, "dir");
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("nodes: at least one node");
    }
    for (String id : nodes.keySet()) {
      checkName("node id", id);
      if (id.equals(ADMIN)) {
        throw new IllegalArgumentException("node id: " + ADMIN + " is the admin client's name");
      }
    }
    requireBouncyCastle();
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Instant now = Instant.now();
    Certificates.Issued ca =
        Certificates.authority("leasehold test CA", now.minus(VALID_BEFORE), now.plus(VALID_FOR));
    Path caFile = dir.resolve("ca.pem");
    writeCertificate(caFile, ca.certificate());
    Map<String, Identity> issued = new LinkedHashMap<>();
    for (Map.Entry<String, ? extends Collection<String>> node : nodes.entrySet()) {
      String id = node.getKey();
      issued.put(id, write(dir, id, issue(ca, id, subjectAltNames(id, node.getValue()))));
    }
    Identity admin = write(dir, ADMIN, issue(ca, ADMIN, List.of()));
    return new LeaseholdTls(dir, ca, caFile, Map.copyOf(issued), admin);
  }

  /**
   * The directory that holds every file.
   *
   * @return the directory
   */
  public Path directory() {
    return dir;
  }

  /**
   * The CA's certificate, which verifies every node and client certificate: what the SDK trusts
   * ({@code LeaseholdClientBuilder.tls(caCert, cert, key)}) and the nodes' {@code --tls-ca-file}.
   *
   * @return {@code ca.pem}
   */
  public Path caCertificate() {
    return caFile;
  }

  /**
   * The CA's certificate, parsed.
   *
   * @return the CA certificate
   */
  public X509Certificate caX509Certificate() {
    return ca.certificate();
  }

  /**
   * The client certificate of {@value #ADMIN}, the nodes' initial admin: it may do anything,
   * including granting roles to the identities of {@link #client}.
   *
   * @return {@code admin.pem} and {@code admin-key.pem}
   */
  public Identity admin() {
    return client(ADMIN);
  }

  /**
   * A node's certificate and key.
   *
   * @param id the node's id
   * @return {@code ID.pem} and {@code ID-key.pem}
   * @throws IllegalArgumentException if there is no such node
   */
  public Identity node(String id) {
    Identity node = nodes.get(id);
    if (node == null) {
      throw new IllegalArgumentException(
          "node: no certificate for " + id + " (nodes: " + nodeIds() + ")");
    }
    return node;
  }

  /**
   * The ids of the nodes that have certificates, in the order they were given.
   *
   * @return the node ids
   */
  public List<String> nodeIds() {
    return List.copyOf(nodes.keySet());
  }

  /**
   * A client certificate whose identity (CN) is {@code identity}, made on first use and kept. With
   * {@code --client-cert-auth} the identity is the holder of the client's leases; it has no role
   * until an admin grants one, e.g. {@code admin.auth().grant(identity, "client")}.
   *
   * @param identity 1 to 64 letters, digits, {@code .}, {@code _} or {@code -}, starting with a
   *     letter or digit; not {@code ca} nor a node id
   * @return {@code IDENTITY.pem} and {@code IDENTITY-key.pem}
   */
  public synchronized Identity client(String identity) {
    Identity known = clients.get(identity);
    if (known != null) {
      return known;
    }
    checkName("identity", identity);
    if (nodes.containsKey(identity)) {
      throw new IllegalArgumentException(
          "identity: " + identity + " is a node's name; its files are the node's");
    }
    Identity made = write(dir, identity, issue(ca, identity, List.of()));
    clients.put(identity, made);
    return made;
  }

  /** 127.0.0.1, localhost, the node's id and then {@code hosts}, each once. */
  static List<String> subjectAltNames(String id, Collection<String> hosts) {
    Set<String> names = new LinkedHashSet<>(List.of("127.0.0.1", "localhost", id));
    for (String host : hosts) {
      if (host != null && !host.isBlank()) {
        names.add(host.trim());
      }
    }
    return new ArrayList<>(names);
  }

  /** An IP address literal (v4, or v6 with colons) rather than a DNS name. */
  static boolean isIpAddress(String host) {
    return IPV4.matcher(host).matches() || host.contains(":");
  }

  /** Fails, saying which dependency to add, where Bouncy Castle is not on the classpath. */
  static void requireBouncyCastle() {
    try {
      Class.forName(
          "org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder",
          false,
          LeaseholdTls.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      throw new IllegalStateException(
          "TLS certificates are made with Bouncy Castle, an optional dependency of "
              + "leasehold-testkit: add org.bouncycastle:bcpkix-jdk18on (test scope) to use TLS",
          e);
    }
  }

  private static void checkName(String what, String name) {
    if (name == null || !NAME.matcher(name).matches() || name.equals("ca")) {
      throw new IllegalArgumentException(
          what
              + ": '"
              + name
              + "' must be 1-64 letters, digits, '.', '_' or '-' starting with a letter or digit,"
              + " and not 'ca'");
    }
  }

  private static Certificates.Issued issue(
      Certificates.Issued ca, String name, Collection<String> subjectAltNames) {
    Instant now = Instant.now();
    return Certificates.issue(
        ca, name, subjectAltNames, now.minus(VALID_BEFORE), now.plus(VALID_FOR));
  }

  private static Identity write(Path dir, String name, Certificates.Issued issued) {
    Path cert = dir.resolve(name + ".pem");
    Path key = dir.resolve(name + "-key.pem");
    writeCertificate(cert, issued.certificate());
    writeFile(key, pem("PRIVATE KEY", issued.key().getEncoded()));
    if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
      try {
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return new Identity(name, cert, key);
  }

  private static void writeCertificate(Path file, X509Certificate certificate) {
    try {
      writeFile(file, pem("CERTIFICATE", certificate.getEncoded()));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot encode a certificate", e);
    }
  }

  private static void writeFile(Path file, String content) {
    try {
      Files.writeString(file, content, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String pem(String type, byte[] der) {
    String body =
        Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }
}
