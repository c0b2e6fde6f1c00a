package io.leasehold.server.fuzz;

import io.grpc.ManagedChannel;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** One cluster a variant started, with a channel to each node for each identity. */
final class FuzzRun implements AutoCloseable {
  final FuzzVariant variant;
  final Path dir;
  final TestCluster cluster;
  final List<String> nodes;

  /** By identity, then node. */
  private final List<List<ManagedChannel>> channels = new ArrayList<>();

  private FuzzRun(FuzzVariant variant, Path dir, TestCluster cluster) {
    this.variant = variant;
    this.dir = dir;
    this.cluster = cluster;
    this.nodes = List.copyOf(cluster.ids());
  }

  static FuzzRun start(FuzzVariant variant, Path dir) throws IOException {
    Files.createDirectories(dir);
    TestCluster cluster = variant.clusterFactory().start(dir);
    FuzzRun run = new FuzzRun(variant, dir, cluster);
    try {
      for (FuzzVariant.Identity identity : variant.identities()) {
        List<ManagedChannel> perNode = new ArrayList<>();
        run.channels.add(perNode);
        for (String node : run.nodes) {
          perNode.add(identity.channels().open(cluster, dir, node));
        }
      }
    } catch (RuntimeException e) {
      run.close();
      throw e;
    }
    return run;
  }

  ManagedChannel channel(int identity, int node) {
    return channels.get(identity).get(node);
  }

  /** The observer's channel to the node that leads now (waiting for one). */
  ManagedChannel observerOnLeader() {
    LeaseholdNode leader = cluster.awaitLeader();
    return channel(0, nodes.indexOf(leader.id()));
  }

  @Override
  public void close() {
    for (List<ManagedChannel> perNode : channels) {
      perNode.forEach(ManagedChannel::shutdownNow);
    }
    for (List<ManagedChannel> perNode : channels) {
      for (ManagedChannel c : perNode) {
        try {
          c.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    cluster.close();
  }
}
