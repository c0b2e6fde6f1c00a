package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.TestCluster;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Endpoints: a dead one is skipped, the members are learned, a node's death is ridden out. */
class FailoverTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aDeadEndpointIsSkipped() throws Exception {
    cluster = Fixtures.threeNodes(dir);
    int dead;
    try (ServerSocket s = new ServerSocket(0)) {
      dead = s.getLocalPort(); // nobody listens there once closed
    }
    List<String> endpoints = new ArrayList<>();
    endpoints.add("127.0.0.1:" + dead);
    endpoints.addAll(Fixtures.endpoints(cluster));
    try (LeaseholdClient client = Fixtures.client(endpoints, b -> b.preferLeader(false))) {
      Lease lease = client.blocking().acquire("lock/dead-first", ttl(10));
      assertTrue(lease.isValid());
      assertTrue(client.blocking().get("lock/dead-first").isPresent());
    }
  }

  @Test
  void aClientGivenOneNodeLearnsTheOthersAndSurvivesThatNodesDeath() throws Exception {
    cluster = Fixtures.stableThreeNodes(dir);
    String only = cluster.followers().get(0).id();
    try (LeaseholdClient client =
        Fixtures.client(List.of(cluster.node(only).clientAddress()), b -> b)) {
      Lease lease = client.blocking().acquire("lock/one-endpoint", ttl(8));
      Fixtures.await(
          "the members are learned", Duration.ofSeconds(10), () -> client.endpoints().size() == 3);
      cluster.stopNode(only);
      Lease other = client.blocking().acquire("lock/after-death", ttl(8));
      assertTrue(other.token() > lease.token());
      assertEquals(lease.token(), client.blocking().get("lock/one-endpoint").orElseThrow().token());
      assertTrue(lease.isValid());
    }
  }
}
