package io.leasehold.testkit;

import io.leasehold.client.LeaseholdClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.testcontainers.containers.Network;
import org.testcontainers.lifecycle.Startable;
import org.testcontainers.lifecycle.Startables;
import org.testcontainers.utility.DockerImageName;

/**
 * A Leasehold cluster of containers ({@link LeaseholdContainer}s) on a Docker network of its own,
 * made by {@link LeaseholdContainer#cluster(DockerImageName, int)}: members {@code n1} to {@code
 * nN}, each known to the others by its id as a network alias, as {@code deploy/docker/compose.yaml}
 * runs three nodes. {@link #start()} starts them together and returns once every node answers
 * {@code /healthz} with {@code SERVING} (a leader is elected and each follows it); {@link #stop()}
 * (or {@link #close()}) removes the containers and the network.
 *
 * <pre>{@code
 * try (LeaseholdContainerCluster cluster =
 *     LeaseholdContainer.cluster(LeaseholdContainer.DEFAULT_IMAGE_NAME, 3).withTls()) {
 *   cluster.start();
 *   try (LeaseholdClient admin = cluster.clientBuilder().build()) {
 *     ...
 *   }
 * }
 * }</pre>
 *
 * <p>It is a Testcontainers {@link Startable}, so a {@code @Container} field of a
 * {@code @Testcontainers} test class starts and stops it too. Each node is a container to configure
 * before the start ({@link #nodes()}: {@code withEnv}, {@code withLogConsumer}) and to stop, pause
 * or disconnect in a test of failures; a stopped node's container is removed with its data.
 */
public final class LeaseholdContainerCluster implements Startable {
  private final Network network;
  private final List<LeaseholdContainer> nodes;
  private boolean tls;
  private LeaseholdTls certificates;
  private Path certificatesDir;

  LeaseholdContainerCluster(DockerImageName image, int size) {
    if (size < 1 || size > 9) {
      throw new IllegalArgumentException("nodes: " + size + " is not between 1 and 9");
    }
    this.network = Network.newNetwork();
    List<String> ids = IntStream.rangeClosed(1, size).mapToObj(i -> "n" + i).toList();
    String peers =
        ids.stream()
            .map(
                id ->
                    id
                        + "="
                        + id
                        + ":"
                        + LeaseholdContainer.PEER_PORT
                        + ":"
                        + LeaseholdContainer.CLIENT_PORT)
            .collect(Collectors.joining(","));
    List<LeaseholdContainer> made = new ArrayList<>();
    for (String id : ids) {
      made.add(
          new LeaseholdContainer(image)
              .withNetwork(network)
              .withNetworkAliases(id)
              .member(id, peers));
    }
    this.nodes = List.copyOf(made);
  }

  /**
   * Mutual TLS on every node's client and Raft ports, as {@link LeaseholdContainer#withTls()} runs
   * one node, on one CA: each member's certificate names its id, its network aliases, {@code
   * localhost}, {@code 127.0.0.1} and the Docker host. The certificates are made at {@link
   * #start()}: see {@link #tls()}.
   *
   * @return this cluster
   * @throws IllegalStateException if Bouncy Castle ({@code org.bouncycastle:bcpkix-jdk18on}) is not
   *     on the classpath
   */
  public LeaseholdContainerCluster withTls() {
    LeaseholdTls.requireBouncyCastle();
    tls = true;
    for (LeaseholdContainer node : nodes) {
      node.clusterTls(certificates);
    }
    return this;
  }

  /**
   * Further options of {@code leasehold server} for every node: see {@link
   * LeaseholdContainer#withServerOptions(String...)}.
   *
   * @param options the options and their values, one element each
   * @return this cluster
   */
  public LeaseholdContainerCluster withServerOptions(String... options) {
    for (LeaseholdContainer node : nodes) {
      node.withServerOptions(options);
    }
    return this;
  }

  /**
   * The nodes' containers, {@code n1} first.
   *
   * @return every node's container
   */
  public List<LeaseholdContainer> nodes() {
    return nodes;
  }

  /**
   * One node's container.
   *
   * @param id a node id, {@code n1} to {@code nN}
   * @return its container
   * @throws IllegalArgumentException if there is no such node
   */
  public LeaseholdContainer node(String id) {
    for (LeaseholdContainer node : nodes) {
      if (node.nodeId().equals(id)) {
        return node;
      }
    }
    throw new IllegalArgumentException("node: no node " + id + " (nodes: " + nodeIds() + ")");
  }

  /**
   * The nodes' ids, {@code n1} to {@code nN}.
   *
   * @return every node's id
   */
  public List<String> nodeIds() {
    return nodes.stream().map(LeaseholdContainer::nodeId).toList();
  }

  /**
   * The network the nodes share; another container on it reaches node {@code nK} at {@code
   * nK:7400}.
   *
   * @return the cluster's network
   */
  public Network network() {
    return network;
  }

  /**
   * The client addresses of the running nodes as the host reaches them, comma-separated in node
   * order: what {@code --endpoints} or {@code leasehold.endpoints} takes.
   *
   * @return the endpoints, e.g. {@code localhost:32768,localhost:32770,localhost:32772}
   */
  public String endpoints() {
    return String.join(",", addresses());
  }

  /**
   * As {@link #endpoints()}, as a list: each running node's {@link LeaseholdContainer#endpoint()}.
   * A node that was stopped is left out.
   *
   * @return the running nodes' client addresses
   */
  public List<String> addresses() {
    return nodes.stream()
        .filter(n -> n.getContainerId() != null)
        .map(LeaseholdContainer::endpoint)
        .toList();
  }

  /**
   * A client builder for this cluster: every running node's endpoint, member discovery off (the
   * members' addresses are names on the cluster's network), a 20 s request timeout with 3 s per
   * attempt (a failover takes seconds), and with TLS the CA and the admin's client certificate.
   *
   * @return a builder to finish and build
   */
  public LeaseholdClientBuilder clientBuilder() {
    return LeaseholdContainer.clientBuilder(addresses(), tls ? tls() : null);
  }

  /**
   * The certificates of a cluster run with {@link #withTls()}: the CA, each node's, the admin's
   * client certificate and more client identities on request. Made at {@link #start()}, deleted at
   * {@link #stop()}.
   *
   * @return the certificates
   * @throws IllegalStateException if TLS is off or the cluster has not started
   */
  public LeaseholdTls tls() {
    if (!tls) {
      throw new IllegalStateException("TLS is off: call withTls() before the cluster starts");
    }
    if (certificates == null) {
      throw new IllegalStateException("the certificates are made when the cluster starts");
    }
    return certificates;
  }

  /**
   * Makes the certificates (with TLS), then starts every node at once and waits until each serves:
   * no node is healthy before a quorum runs. If one fails to start, every node is stopped again.
   *
   * @throws RuntimeException what a node's start failed with
   */
  @Override
  public void start() {
    if (tls && certificates == null) {
      try {
        certificatesDir = Files.createTempDirectory("leasehold-tls");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Map<String, List<String>> hosts = new LinkedHashMap<>();
      for (LeaseholdContainer node : nodes) {
        hosts.put(node.nodeId(), node.hosts());
      }
      certificates = LeaseholdTls.create(certificatesDir, hosts);
      for (LeaseholdContainer node : nodes) {
        node.clusterTls(certificates);
      }
    }
    try {
      Startables.deepStart(nodes).join();
    } catch (CompletionException e) {
      RuntimeException failure =
          e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
      try {
        stop();
      } catch (RuntimeException stopping) {
        failure.addSuppressed(stopping);
      }
      throw failure;
    }
  }

  /** Stops every node, removes the network and deletes the certificates. */
  @Override
  public void stop() {
    RuntimeException failure = null;
    for (LeaseholdContainer node : nodes) {
      try {
        node.stop();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    network.close();
    if (certificatesDir != null) {
      LeaseholdContainer.deleteTree(certificatesDir);
      certificatesDir = null;
      certificates = null;
      for (LeaseholdContainer node : nodes) {
        node.clusterTls(null);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
