package io.leasehold.benchmarks.watch;

import io.grpc.ManagedChannel;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.LoopbackPorts;
import io.leasehold.server.Peer;
import io.leasehold.testkit.LeaseholdCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Three (or N) real Leasehold nodes inside this JVM, started by the test kit's {@link
 * LeaseholdCluster} (free loopback ports, a data directory each) with the run's election timeouts
 * and tuning, under one temp directory that {@link #close} deletes. Clients reach them over
 * loopback TCP ({@link ClientChannels}).
 */
final class BenchCluster implements AutoCloseable {
  private final ClusterHome home = new ClusterHome("bench-cleanup", this::closeNodes);
  private LeaseholdCluster cluster;
  private List<LeaseholdNode> nodes = List.of();

  private BenchCluster() throws IOException {}

  static BenchCluster start(int size, Duration electionMin, Duration electionMax, NodeTuning tuning)
      throws IOException {
    BenchCluster bench = new BenchCluster();
    try {
      bench.cluster =
          LeaseholdCluster.builder()
              .nodes(size)
              .dataDir(bench.home.dir().resolve("nodes"))
              .readyTimeout(Duration.ofSeconds(60))
              .configure(
                  b -> {
                    tuning.applyTo(b.electionTimeout(electionMin, electionMax));
                    return b;
                  })
              .start();
      bench.nodes = bench.cluster.nodeIds().stream().map(bench.cluster::node).toList();
      bench.awaitReadyLeader(Duration.ofSeconds(60));
      return bench;
    } catch (IOException | RuntimeException | Error e) {
      bench.close();
      throw e;
    }
  }

  Path baseDir() {
    return home.dir();
  }

  List<LeaseholdNode> nodes() {
    return nodes;
  }

  Optional<LeaseholdNode> leader() {
    return nodes.stream().filter(LeaseholdNode::isLeader).findFirst();
  }

  /**
   * Waits until a node leads with its expiry ticker promoted (leader ready), as TestCluster does.
   */
  LeaseholdNode awaitReadyLeader(Duration timeout) {
    await(
        "a ready leader",
        timeout,
        () -> leader().filter(l -> l.diagnostics().ticker().scheduler().isActive()).isPresent());
    return leader().orElseThrow();
  }

  LeaseholdNode follower() {
    return nodes.stream().filter(n -> !n.isLeader()).findFirst().orElseThrow();
  }

  /** A new plaintext channel to the node's client port (closed by {@link #close}). */
  ManagedChannel channel(LeaseholdNode node) {
    return home.clients().channel(node.clientAddress());
  }

  /**
   * As {@link #channel(LeaseholdNode)}; {@code acceptLz4} false: Watch streams come uncompressed.
   */
  ManagedChannel channel(LeaseholdNode node, boolean acceptLz4) {
    return home.clients().channel(node.clientAddress(), acceptLz4);
  }

  /** A channel for the acquire load ({@link ClientChannels#writerChannel}). */
  ManagedChannel writerChannel(LeaseholdNode node, boolean shareWatchersLoop) {
    return home.clients().writerChannel(node.clientAddress(), shareWatchersLoop);
  }

  static void await(String what, Duration timeout, BooleanSupplier condition) {
    if (!awaitQuietly(timeout, condition)) {
      throw new IllegalStateException(
          "timed out after " + timeout.toMillis() + " ms waiting for " + what);
    }
  }

  /** Polls every 5 ms; returns whether the condition held before the timeout. */
  static boolean awaitQuietly(Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        if (condition.getAsBoolean()) {
          return true;
        }
      } catch (RuntimeException notYet) {
        // Nodes may be mid-election.
      }
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      try {
        TimeUnit.MILLISECONDS.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }

  /** {@code size} peers n1, n2… on 127.0.0.1, each with a free peer port and client port. */
  static List<Peer> loopbackPeers(int size) throws IOException {
    int[] ports = LoopbackPorts.free(size * 2);
    List<Peer> peers = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      peers.add(new Peer("n" + (i + 1), "127.0.0.1", ports[2 * i], ports[2 * i + 1]));
    }
    return peers;
  }

  @Override
  public void close() {
    home.close();
  }

  private void closeNodes() {
    if (cluster != null) {
      try {
        cluster.close();
      } catch (RuntimeException e) {
        System.err.println("closing the nodes: " + e);
      }
    }
  }
}
