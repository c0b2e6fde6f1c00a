package io.leasehold.spring.boot;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;

/** The cluster and clients of this module's tests. */
final class Clusters {
  private Clusters() {}

  /** Three nodes with election timeouts of 1-1.9 s: fewer spurious elections on a loaded machine. */
  static TestCluster threeNodes(Path dir) throws IOException {
    TestCluster cluster = TestCluster.start(3, dir, b -> b.electionTimeout(Duration.ofMillis(1000), Duration.ofMillis(1900)));
    cluster.awaitLeader();
    return cluster;
  }

  /** The nodes' client addresses, comma-separated as in {@code leasehold.endpoints}. */
  static String endpoints(TestCluster cluster) {
    return String.join(",", endpointList(cluster));
  }

  static List<String> endpointList(TestCluster cluster) {
    return cluster.running().stream().map(LeaseholdNode::clientAddress).toList();
  }

  /** A client of the application's own, outside any context. */
  static LeaseholdClient client(TestCluster cluster) {
    return LeaseholdClient.builder()
        .endpoints(endpointList(cluster))
        .requestTimeout(Duration.ofSeconds(20))
        .attemptTimeout(Duration.ofSeconds(3))
        .build();
  }

  /** Waits for {@code condition}, failing after {@code deadline}. */
  static void await(Duration deadline, String what, BooleanSupplier condition) throws InterruptedException {
    long end = System.nanoTime() + deadline.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("not within " + deadline + ": " + what);
      }
      Thread.sleep(20);
    }
  }
}
