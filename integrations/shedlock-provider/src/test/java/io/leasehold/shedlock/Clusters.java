package io.leasehold.shedlock;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** The cluster and clients of this module's tests. */
final class Clusters {
  private Clusters() {}

  /** Three nodes with election timeouts of 1-1.9 s: fewer spurious elections on a loaded machine. */
  static TestCluster threeNodes(Path dir) throws IOException {
    TestCluster cluster = TestCluster.start(3, dir, b -> b.electionTimeout(Duration.ofMillis(1000), Duration.ofMillis(1900)));
    cluster.awaitLeader();
    return cluster;
  }

  static LeaseholdClient client(TestCluster cluster) {
    return builder(cluster).build();
  }

  static LeaseholdClientBuilder builder(TestCluster cluster) {
    List<String> endpoints = cluster.running().stream().map(LeaseholdNode::clientAddress).toList();
    return LeaseholdClient.builder()
        .endpoints(endpoints)
        .requestTimeout(Duration.ofSeconds(20))
        .attemptTimeout(Duration.ofSeconds(3));
  }
}
