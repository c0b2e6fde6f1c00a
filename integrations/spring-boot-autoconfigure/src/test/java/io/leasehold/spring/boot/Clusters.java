package io.leasehold.spring.boot;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** The cluster and clients of this module's tests. */
final class Clusters {
  private Clusters() {}

  static TestCluster threeNodes(Path dir) throws IOException {
    return TestCluster.start(3, dir, TestCluster::steadyElections);
  }

  /** The nodes' client addresses, comma-separated as in {@code leasehold.endpoints}. */
  static String endpoints(TestCluster cluster) {
    return String.join(",", cluster.clientAddresses());
  }

  /** A client of the application's own, outside any context. */
  static LeaseholdClient client(TestCluster cluster) {
    return LeaseholdClient.builder()
        .endpoints(cluster.clientAddresses())
        .requestTimeout(Duration.ofSeconds(20))
        .attemptTimeout(Duration.ofSeconds(3))
        .build();
  }

  /** Waits for {@code condition}, failing after {@code deadline}. */
  static void await(Duration deadline, String what, BooleanSupplier condition)
      throws InterruptedException {
    long end = System.nanoTime() + deadline.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("not within " + deadline + ": " + what);
      }
      Thread.sleep(20);
    }
  }
}
