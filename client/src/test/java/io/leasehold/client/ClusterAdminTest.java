package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Peer;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * client.cluster(): status, adding a joined node, moving leadership to it, removing a member, a
 * snapshot.
 */
class ClusterAdminTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void membershipLeadershipAndSnapshotsThroughTheSdk() throws Exception {
    cluster = Fixtures.threeNodes(dir);
    try (LeaseholdClient client = Fixtures.client(Fixtures.endpoints(cluster), b -> b)) {
      Lease held = client.blocking().acquire("lock/admin", ttl(30));
      NodeStatus status = client.cluster().status().join();
      assertEquals(3, status.members().size());
      assertTrue(status.leaderId().isPresent());
      assertTrue(status.members().stream().allMatch(m -> m.clientAddress().isPresent()));

      LeaseholdNode n4 = cluster.startJoiningNode("n4");
      Peer p4 = cluster.peer("n4");
      List<ClusterMember> members =
          client.cluster().addMember("n4", p4.peerAddress(), p4.clientAddress()).join();
      assertEquals(4, members.size());
      assertEquals(
          p4.clientAddress(),
          members.stream()
              .filter(m -> m.id().equals("n4"))
              .findFirst()
              .orElseThrow()
              .clientAddress()
              .orElseThrow());
      assertEquals("n4", client.cluster().transferLeadership("n4").join());
      Fixtures.await("n4 leads", Duration.ofSeconds(30), n4::isLeader);

      String removed =
          cluster.followers().stream()
              .map(LeaseholdNode::id)
              .filter(id -> !id.equals("n4"))
              .findFirst()
              .orElseThrow();
      assertEquals(3, client.cluster().removeMember(removed).join().size());
      cluster.stopNode(removed);

      long granted = client.blocking().get("lock/admin").orElseThrow().modRevision();
      SnapshotResult snapshot = client.cluster().takeSnapshot().join();
      assertTrue(snapshot.index() >= granted, "the snapshot holds the lease: " + snapshot);
      assertTrue(held.isValid(), "the lease was kept alive through all of it");
      assertEquals(held.token(), client.blocking().get("lock/admin").orElseThrow().token());
    }
  }
}
