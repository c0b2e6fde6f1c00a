package io.leasehold.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/** Spring's lock-based leader election over two registries on two clients. */
class LeaseholdLockRegistryLeaderTest {
  @TempDir
  Path dir;

  @Test
  void oneOfTwoInitiatorsLeadsAndTheOtherTakesOverWhenItStops() throws Exception {
    try (TestCluster cluster = TestCluster.start(3, dir, c -> c.electionTimeout(Duration.ofMillis(1000), Duration.ofMillis(1900)))) {
      cluster.awaitLeader();
      List<String> endpoints = cluster.running().stream().map(LeaseholdNode::clientAddress).toList();
      try (LeaseholdClient one = LeaseholdClient.connect(endpoints); LeaseholdClient two = LeaseholdClient.connect(endpoints)) {
        LockRegistryLeaderInitiator first = new LockRegistryLeaderInitiator(new LeaseholdLockRegistry(one), new DefaultCandidate("one", "orders"));
        LockRegistryLeaderInitiator second = new LockRegistryLeaderInitiator(new LeaseholdLockRegistry(two), new DefaultCandidate("two", "orders"));
        first.start();
        second.start();
        try {
          TestCluster.await("a leader", Duration.ofSeconds(20), () -> first.getContext().isLeader() || second.getContext().isLeader());
          // Leadership holds still across several heartbeats (each re-enters the held lock).
          LockRegistryLeaderInitiator leader = first.getContext().isLeader() ? first : second;
          LockRegistryLeaderInitiator follower = leader == first ? second : first;
          long until = System.nanoTime() + Duration.ofMillis(2000).toNanos();
          while (System.nanoTime() < until) {
            assertTrue(leader.getContext().isLeader() && !follower.getContext().isLeader(), "exactly one leader");
            Thread.sleep(50);
          }
          String holder = one.get("spring-lock/orders").join().orElseThrow().holder();
          assertEquals(leader == first ? one.holder() : two.holder(), holder);

          leader.stop();
          TestCluster.await("the other initiator leads", Duration.ofSeconds(20), () -> follower.getContext().isLeader());
          assertEquals(leader == first ? two.holder() : one.holder(), one.get("spring-lock/orders").join().orElseThrow().holder());
        } finally {
          first.stop();
          second.stop();
        }
      }
    }
  }
}
