package io.leasehold.server.raft;

import static io.leasehold.server.Requests.acquire;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fault tests' delay nemesis, as a node process sees it: a line in the node's fault-control
 * file holds the AppendEntries it receives from one peer; {@code none} delivers what is held and
 * ends it. Raft goes on meanwhile through the third member, and the held node catches up.
 */
class FaultControlTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aDelayLineHoldsOnePeersAppendsAndNoneReleasesThem() throws Exception {
    cluster =
        TestCluster.start(
            3,
            dir,
            (id, b) -> TestCluster.steadyElections(b).faultControl(dir.resolve(id + ".faults")));
    LeaseholdNode leader = cluster.awaitLeader();
    LeaseholdNode follower = cluster.followers().get(0);
    Files.writeString(
        dir.resolve(follower.id() + ".faults"), "delay " + leader.id() + " 2000 2000 1\n");
    TestCluster.await(
        "the follower holds the leader's appends",
        Duration.ofSeconds(10),
        () -> {
          cluster.leases(leader.id()).acquire(acquire("held/" + System.nanoTime(), "h", 60));
          return !follower.diagnostics().peerTraffic().held().isEmpty();
        });
    for (int i = 0; i < 5; i++) {
      assertEquals(
          Outcome.GRANTED,
          cluster.leases(leader.id()).acquire(acquire("during/" + i, "h", 60)).getOutcome(),
          "writes commit through the third member");
    }
    Files.writeString(dir.resolve(follower.id() + ".faults"), "none\n");
    TestCluster.await(
        "nothing held",
        Duration.ofSeconds(10),
        () -> follower.diagnostics().peerTraffic().held().isEmpty());
    cluster.awaitConverged();
    assertArrayEquals(TestCluster.dump(cluster.awaitLeader()), TestCluster.dump(follower));
  }
}
