package io.leasehold.testkit;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.utility.DockerImageName;

/**
 * A Leasehold node in a container of the project's image, for Testcontainers: {@code leasehold
 * server} as the image runs it, one standalone node by default, or a member of a {@link
 * #cluster(DockerImageName, int) cluster} of containers on a network of its own. It waits until the
 * node's {@code /healthz} answers {@code SERVING} and gives the SDK its endpoint, from the host.
 *
 * <pre>{@code
 * try (LeaseholdContainer leasehold = new LeaseholdContainer(LeaseholdContainer.DEFAULT_IMAGE_NAME)) {
 *   leasehold.start();
 *   try (LeaseholdClient client = leasehold.clientBuilder().holder("worker-a").build()) {
 *     AcquireResult result = client.tryAcquire("jobs/nightly").join();
 *   }
 * }
 * }</pre>
 *
 * <p>The image is the one {@code deploy/docker/build-image.sh} builds ({@value #DEFAULT_IMAGE},
 * {@link #DEFAULT_IMAGE_NAME}); another name or tag of it is accepted, and an image of another
 * repository that is the same image must say so with {@link
 * DockerImageName#asCompatibleSubstituteFor(String)}. Nothing is built or pulled for the test: the
 * image must be there, or in a registry the Docker engine reaches.
 *
 * <p>{@link #withTls()} runs the node with mutual TLS as {@code deploy/docker/compose.tls.yaml}
 * does, on certificates made in process when the container starts ({@link LeaseholdTls}); {@link
 * #clientBuilder()} then presents the admin's client certificate. The node runs with election
 * timeouts of 1 to 1.9 s, as the in-JVM nodes of {@link LeaseholdCluster} do, and a heap of at most
 * 256 MB ({@code JDK_JAVA_OPTIONS=-Xmx256m}; {@code withEnv} changes it). Its data lives in the
 * container and goes with it.
 *
 * <p>Testcontainers is an optional dependency of the kit: a test that uses this class declares
 * {@code org.testcontainers:testcontainers} itself, and {@code org.bouncycastle:bcpkix-jdk18on} for
 * TLS.
 */
public class LeaseholdContainer extends GenericContainer<LeaseholdContainer> {
  /** The image {@code deploy/docker/build-image.sh} builds by default. */
  public static final String DEFAULT_IMAGE = "leasehold:dev";

  /** {@value #DEFAULT_IMAGE}, the image {@code deploy/docker/build-image.sh} builds by default. */
  public static final DockerImageName DEFAULT_IMAGE_NAME = DockerImageName.parse(DEFAULT_IMAGE);

  /** The gRPC API's port in the container, published on a free port of the host. */
  public static final int CLIENT_PORT = 7400;

  /** The Raft port in the container, reached by the other members on the cluster's network. */
  public static final int PEER_PORT = 7401;

  /**
   * The port of {@code /metrics} and {@code /healthz} in the container (the image's {@code
   * LEASEHOLD_METRICS_PORT}), published on a free port of the host; plain HTTP, TLS or not.
   */
  public static final int METRICS_PORT = 7402;

  /** Where the node's certificates are copied in the container, when TLS is on. */
  public static final String CERTIFICATES_DIR = "/certs";

  static final String ELECTION_TIMEOUT_MIN = "1000ms";
  static final String ELECTION_TIMEOUT_MAX = "1900ms";
  private static final Duration STARTUP_TIMEOUT = Duration.ofMinutes(3);

  private final List<String> serverOptions = new ArrayList<>();
  private String nodeId = "n1";
  private String peers; // null: a standalone node
  private boolean tls;
  private boolean clusterCertificates; // made by the node's cluster when it starts
  private LeaseholdTls certificates;
  private Path ownCertificates; // the directory of certificates this container made, if it did

  /**
   * A standalone node of {@code image}.
   *
   * @param image the Leasehold image, e.g. {@link #DEFAULT_IMAGE_NAME}
   * @throws IllegalStateException if the image is not {@code leasehold} or declared a compatible
   *     substitute for it
   */
  public LeaseholdContainer(DockerImageName image) {
    super(image);
    image.assertCompatibleWith(DockerImageName.parse("leasehold"));
    withExposedPorts(CLIENT_PORT, METRICS_PORT);
    withEnv("JDK_JAVA_OPTIONS", "-Xmx256m");
    waitingFor(
        Wait.forHttp("/healthz")
            .forPort(METRICS_PORT)
            .forStatusCode(200)
            .withStartupTimeout(STARTUP_TIMEOUT));
    updateCommand();
  }

  /**
   * A standalone node of the image named {@code image}.
   *
   * @param image the image's name, e.g. {@value #DEFAULT_IMAGE}
   */
  public LeaseholdContainer(String image) {
    this(DockerImageName.parse(image));
  }

  /**
   * A cluster of {@code nodes} containers of {@code image} on a network of its own, {@code n1} to
   * {@code nN}, not started yet.
   *
   * @param image the Leasehold image
   * @param nodes how many members, 1 to 9 (3 survives the loss of one)
   * @return the cluster, to start (or to declare as a Testcontainers {@code @Container})
   */
  public static LeaseholdContainerCluster cluster(DockerImageName image, int nodes) {
    return new LeaseholdContainerCluster(image, nodes);
  }

  /**
   * Mutual TLS on the client and Raft ports, as {@code deploy/docker/compose.tls.yaml} runs it: the
   * node presents its own certificate, client certificates are required ({@code
   * --client-cert-auth}) and the admin certificate's identity is the initial admin. {@code
   * /healthz} and {@code /metrics} stay plain HTTP ({@code --metrics-plaintext}), for the wait and
   * the image's health check. The certificates are made when the container starts: see {@link
   * #tls()}.
   *
   * @return this container
   * @throws IllegalStateException if Bouncy Castle ({@code org.bouncycastle:bcpkix-jdk18on}) is not
   *     on the classpath
   */
  public LeaseholdContainer withTls() {
    LeaseholdTls.requireBouncyCastle();
    tls = true;
    updateCommand();
    return self();
  }

  /**
   * Further options of {@code leasehold server}, after the container's own, e.g. {@code
   * withServerOptions("--max-renew-items", "100")}. Options the container gives itself ({@code
   * --standalone}, {@code --id}, {@code --listen-host}, {@code --data-dir}, the TLS options) cannot
   * be given again; {@code --election-timeout-min} or {@code -max} here replace the container's
   * timeouts.
   *
   * @param options the options and their values, one element each
   * @return this container
   */
  public LeaseholdContainer withServerOptions(String... options) {
    for (String o : options) {
      serverOptions.add(Objects.requireNonNull(o, "options"));
    }
    updateCommand();
    return self();
  }

  /**
   * The node's id: {@code n1} for a standalone node, {@code n1} to {@code nN} in a cluster.
   *
   * @return the node id
   */
  public String nodeId() {
    return nodeId;
  }

  /**
   * Whether the node runs with TLS ({@link #withTls()}, or its cluster's).
   *
   * @return true with TLS
   */
  public boolean isTls() {
    return tls;
  }

  /**
   * The node's client address as the host reaches it ({@code host:port}, the published {@link
   * #CLIENT_PORT}): what the SDK's {@code endpoints(...)}, the CLI's {@code --endpoints} or {@code
   * leasehold.endpoints} take.
   *
   * @return the endpoint, e.g. {@code localhost:32768}
   * @throws IllegalStateException if the container has not started
   */
  public String endpoint() {
    return address(CLIENT_PORT);
  }

  /**
   * The address of the node's {@code /metrics} and {@code /healthz} as the host reaches it, plain
   * HTTP.
   *
   * @return {@code host:port} of the published {@link #METRICS_PORT}
   * @throws IllegalStateException if the container has not started
   */
  public String metricsEndpoint() {
    return address(METRICS_PORT);
  }

  private String address(int port) {
    if (getContainerId() == null) {
      throw new IllegalStateException(nodeId + ": the container has not started");
    }
    return getHost() + ":" + getMappedPort(port);
  }

  /**
   * A client builder for this node: its {@link #endpoint()}, member discovery off (the node's own
   * address is one inside the container), a 20 s request timeout with 3 s per attempt, and with TLS
   * the CA and the admin's client certificate (so the admin is the holder too). Build as many
   * clients as a test needs and close each.
   *
   * @return a builder to finish and build
   * @throws IllegalStateException if the container has not started
   */
  public LeaseholdClientBuilder clientBuilder() {
    return clientBuilder(List.of(endpoint()), tls ? tls() : null);
  }

  /**
   * The certificates of a node run with {@link #withTls()}: the CA the SDK trusts, the admin's
   * client certificate, more client identities on request. Made when the container starts (a
   * cluster's, when the cluster starts) and deleted when it stops.
   *
   * @return the certificates
   * @throws IllegalStateException if TLS is off or the container has not started
   */
  public LeaseholdTls tls() {
    if (!tls) {
      throw new IllegalStateException("TLS is off: call withTls() before the container starts");
    }
    if (certificates == null) {
      throw new IllegalStateException("the certificates are made when the container starts");
    }
    return certificates;
  }

  /** Makes the node's certificates, unless its cluster made them. */
  @Override
  protected void configure() {
    super.configure();
    if (tls && certificates == null) {
      if (clusterCertificates) {
        throw new IllegalStateException(
            nodeId + ": a TLS cluster's node gets its certificates when the cluster starts");
      }
      try {
        ownCertificates = Files.createTempDirectory("leasehold-tls");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      certificates = LeaseholdTls.create(ownCertificates, Map.of(nodeId, hosts()));
    }
  }

  /** Copies the node's certificates in, before it starts. */
  @Override
  protected void containerIsCreated(String containerId) {
    super.containerIsCreated(containerId);
    if (tls) {
      LeaseholdTls.Identity self = certificates.node(nodeId);
      // Readable by everyone (the default mode): the node runs as the image's user (10001) and
      // the files are copied in as root's. Test keys of a throwaway CA, in a throwaway container.
      copy(certificates.caCertificate(), "ca.pem");
      copy(self.certificate(), nodeId + ".pem");
      copy(self.key(), nodeId + "-key.pem");
    }
  }

  /** Stops the container and deletes the certificates it made. */
  @Override
  public void stop() {
    try {
      super.stop();
    } finally {
      if (ownCertificates != null) {
        deleteTree(ownCertificates);
        ownCertificates = null;
        certificates = null;
      }
    }
  }

  /** Makes this container member {@code id} of the cluster {@code peers} describes. */
  LeaseholdContainer member(String id, String peers) {
    this.nodeId = id;
    this.peers = peers;
    withEnv("LEASEHOLD_PEERS", peers);
    updateCommand();
    return self();
  }

  /** TLS with the cluster's certificates ({@code null} until the cluster starts). */
  void clusterTls(LeaseholdTls shared) {
    tls = true;
    clusterCertificates = true;
    certificates = shared;
    updateCommand();
  }

  /** The hosts the node's certificate names besides its id: its network aliases, the host's. */
  List<String> hosts() {
    List<String> hosts = new ArrayList<>(getNetworkAliases());
    hosts.add(getHost());
    return hosts;
  }

  /** The {@code leasehold server} command line the container runs. */
  List<String> command() {
    List<String> c = new ArrayList<>(List.of("server"));
    if (peers == null) {
      c.add("--standalone");
    } else {
      c.addAll(List.of("--id", nodeId));
    }
    c.addAll(List.of("--listen-host", "0.0.0.0", "--data-dir", "/data/" + nodeId));
    if (!serverOptions.contains("--election-timeout-min")
        && !serverOptions.contains("--election-timeout-max")) {
      c.addAll(
          List.of(
              "--election-timeout-min",
              ELECTION_TIMEOUT_MIN,
              "--election-timeout-max",
              ELECTION_TIMEOUT_MAX));
    }
    if (tls) {
      String cert = CERTIFICATES_DIR + "/" + nodeId + ".pem";
      String key = CERTIFICATES_DIR + "/" + nodeId + "-key.pem";
      String ca = CERTIFICATES_DIR + "/ca.pem";
      c.addAll(
          List.of(
              "--tls-cert-file",
              cert,
              "--tls-key-file",
              key,
              "--tls-ca-file",
              ca,
              "--client-cert-auth",
              "--initial-admin",
              LeaseholdTls.ADMIN,
              "--peer-tls-cert-file",
              cert,
              "--peer-tls-key-file",
              key,
              "--peer-tls-ca-file",
              ca,
              "--metrics-plaintext"));
    }
    c.addAll(serverOptions);
    return c;
  }

  /**
   * A builder for {@code endpoints}, presenting the admin's certificate when {@code tls} is set.
   */
  static LeaseholdClientBuilder clientBuilder(List<String> endpoints, LeaseholdTls tls) {
    LeaseholdClientBuilder b =
        LeaseholdClient.builder()
            .endpoints(endpoints)
            // The members' own addresses (n1:7400, 127.0.0.1:7400) are not reachable from the host.
            .discoverMembers(false)
            .requestTimeout(Duration.ofSeconds(20))
            .attemptTimeout(Duration.ofSeconds(3));
    if (tls != null) {
      LeaseholdTls.Identity admin = tls.admin();
      b.tls(tls.caCertificate(), admin.certificate(), admin.key());
    }
    return b;
  }

  static void deleteTree(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void updateCommand() {
    setCommand(command().toArray(new String[0]));
  }

  private void copy(Path file, String name) {
    try {
      copyFileToContainer(Transferable.of(Files.readAllBytes(file)), CERTIFICATES_DIR + "/" + name);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
