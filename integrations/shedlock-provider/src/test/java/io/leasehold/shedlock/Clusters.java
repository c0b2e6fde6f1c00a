package io.leasehold.shedlock;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/** The cluster and clients of this module's tests. */
final class Clusters {
  private Clusters() {}

  static TestCluster threeNodes(Path dir) throws IOException {
    return TestCluster.start(3, dir, TestCluster::steadyElections);
  }

  static LeaseholdClient client(TestCluster cluster) {
    return builder(cluster).build();
  }

  static LeaseholdClientBuilder builder(TestCluster cluster) {
    return LeaseholdClient.builder()
        .endpoints(cluster.clientAddresses())
        .requestTimeout(Duration.ofSeconds(20))
        .attemptTimeout(Duration.ofSeconds(3));
  }
}
