package io.leasehold.testkit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cluster the kit starts, and what it does to it, checked on real nodes. */
class LeaseholdClusterTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final LeaseOptions MINUTE = LeaseOptions.defaults().withTtl(Duration.ofMinutes(1));

  @Test
  void aStandaloneNodeServesTheSdkAndDeletesItsDataWhenClosed() throws Exception {
    Path data;
    try (LeaseholdCluster node = LeaseholdCluster.start(1)) {
      assertEquals(List.of("n1"), node.nodeIds());
      assertTrue(node.endpoints().matches("127\\.0\\.0\\.1:\\d+"), node.endpoints());
      assertEquals("n1", node.leader());
      Lease lease = node.client().acquire("kit/standalone", MINUTE).join();
      assertTrue(lease.token() > 0);
      data = node.node("n1").config().dataDir();
      assertTrue(Files.isDirectory(data));
    }
    assertFalse(Files.exists(data), data + " deleted");
  }

  /**
   * Moving the clock ends a lease whose TTL the move used up, at once and as a real expiry (its
   * holder loses it, another client gets the name with a higher token), without counting a stall; a
   * lease with TTL to spare stays.
   */
  @Test
  void advancingTheClockEndsLeasesWithoutWaitingForTheirTtl() throws Exception {
    try (LeaseholdCluster cluster = LeaseholdCluster.start(3);
        LeaseholdClient other = cluster.clientBuilder().holder("other").build()) {
      // Renewed every 10 s in real time: the move ends it long before its holder renews it.
      LeaseOptions halfMinute = LeaseOptions.defaults().withTtl(Duration.ofSeconds(30));
      Lease shortLease = cluster.client().acquire("kit/short", halfMinute).join();
      Lease hour =
          cluster
              .client()
              .acquire("kit/hour", LeaseOptions.defaults().withTtl(Duration.ofHours(1)))
              .join();
      long stallsBefore =
          cluster.node(cluster.leader()).diagnostics().ticker().scheduler().stalls();
      java.time.Instant realEnd = java.time.Instant.now().plus(Duration.ofSeconds(30));

      cluster.advanceClock(Duration.ofSeconds(31));

      assertTrue(
          cluster.client().get("kit/short").join().isEmpty(),
          "the 30 s lease expired when advanceClock returned");
      assertTrue(java.time.Instant.now().isBefore(realEnd), "before its TTL ran out in real time");
      await().atMost(WAIT).until(() -> shortLease.state() != io.leasehold.client.LeaseState.HELD);
      assertEquals(io.leasehold.client.LeaseState.HELD, hour.state());
      assertTrue(cluster.client().get("kit/hour").join().isPresent());
      Lease taken = other.acquire("kit/short", MINUTE).join();
      assertTrue(taken.token() > shortLease.token(), "a later token");
      assertEquals(
          stallsBefore,
          cluster.node(cluster.leader()).diagnostics().ticker().scheduler().stalls(),
          "a move is not a stall");
      assertThrows(IllegalArgumentException.class, () -> cluster.advanceClock(Duration.ZERO));
    }
  }

  @Test
  void aDataDirOfTheTestsOwnIsLeftInPlace(@TempDir Path dir) throws Exception {
    try (LeaseholdCluster node = LeaseholdCluster.builder().dataDir(dir).start()) {
      node.client().acquire("kit/kept", MINUTE).join();
    }
    assertTrue(Files.isDirectory(dir.resolve("n1")));

    IllegalArgumentException reused =
        assertThrows(
            IllegalArgumentException.class, () -> LeaseholdCluster.builder().dataDir(dir).start());
    assertEquals(
        "dataDir: " + dir + " is not empty (a new cluster needs an empty directory)",
        reused.getMessage());
  }

  @Test
  void aRestartedNodeKeepsItsPortsAndItsData() throws Exception {
    try (LeaseholdCluster cluster = LeaseholdCluster.start(3)) {
      String endpoints = cluster.endpoints();
      Lease lease = cluster.client().acquire("kit/restart", MINUTE).join();
      String follower = cluster.followers().get(0);

      cluster.kill(follower);
      assertFalse(cluster.isRunning(follower));
      assertThrows(IllegalStateException.class, () -> cluster.node(follower));
      cluster.restart(follower);

      assertTrue(cluster.isRunning(follower));
      assertEquals(endpoints, cluster.endpoints());
      try (LeaseholdClient direct =
          LeaseholdClient.builder()
              .endpoints(cluster.address(follower))
              .discoverMembers(false)
              .preferLeader(false)
              .build()) {
        await("the restarted node serves the lease from its own data")
            .atMost(WAIT)
            .ignoreExceptions()
            .until(
                () -> direct.get("kit/restart").join().map(LeaseInfo::token), t -> t.isPresent());
        assertEquals(lease.token(), direct.get("kit/restart").join().orElseThrow().token());
      }
    }
  }

  @Test
  void anIsolatedLeaderIsReplacedAndCatchesUpWhenHealed() throws Exception {
    try (LeaseholdCluster cluster = LeaseholdCluster.start(3)) {
      String old = cluster.leader();
      cluster.isolate(old);
      assertTrue(cluster.isIsolated(old));

      // The two others elect one of them; the SDK finds it.
      await("a leader among the other two")
          .atMost(WAIT)
          .ignoreExceptions()
          .until(() -> otherLeader(cluster, old));
      Lease lease = cluster.client().acquire("kit/isolated", MINUTE).join();
      String leader =
          cluster.nodeIds().stream()
              .filter(id -> !id.equals(old) && cluster.node(id).isLeader())
              .findFirst()
              .orElseThrow();
      long applied = appliedIndex(cluster, leader);
      assertTrue(
          appliedIndex(cluster, old) < applied,
          "the isolated node applied nothing of the majority's");

      cluster.heal(old);
      assertFalse(cluster.isIsolated(old));
      await("the healed node follows and applies what it missed")
          .atMost(WAIT)
          .ignoreExceptions()
          .until(() -> !cluster.node(old).isLeader() && appliedIndex(cluster, old) >= applied);
      assertTrue(lease.isValid());
    }
  }

  @Test
  void anIsolatedFollowerFallsBehindUntilHealed() throws Exception {
    try (LeaseholdCluster cluster = LeaseholdCluster.start(3)) {
      String leader = cluster.leader();
      String cut = cluster.followers().get(0);
      cluster.isolate(cut);

      cluster.client().acquire("kit/behind", MINUTE).join();
      long applied = appliedIndex(cluster, leader);
      assertTrue(appliedIndex(cluster, cut) < applied, "the isolated follower got no append");
      try (LeaseholdClient onlyTheCutNode =
          LeaseholdClient.builder()
              .endpoints(cluster.address(cut))
              .discoverMembers(false)
              .preferLeader(false)
              .requestTimeout(Duration.ofSeconds(2))
              .build()) {
        assertThrows(
            CompletionException.class,
            () -> onlyTheCutNode.tryAcquire("kit/through-the-cut-node", MINUTE).join(),
            "a write sent to the isolated node reaches no leader");
      }
      assertFalse(cluster.client().get("kit/through-the-cut-node").join().isPresent());

      cluster.healAll();
      await("the follower catches up")
          .atMost(WAIT)
          .ignoreExceptions()
          .until(() -> appliedIndex(cluster, cut) >= applied);
    }
  }

  @Test
  void restoreStartsKilledNodesAndHealsIsolatedOnes() throws Exception {
    try (LeaseholdCluster cluster = LeaseholdCluster.start(3)) {
      cluster.kill("n1");
      cluster.isolate("n2");
      cluster.restore();
      assertTrue(cluster.nodeIds().stream().allMatch(cluster::isRunning));
      assertFalse(cluster.isIsolated("n2"));
      // restore() returned once every node had applied what the leader had committed then.
      assertEquals(3, cluster.followers().size() + 1);
      cluster.client().acquire("kit/restored", MINUTE).join();
    }
  }

  @Test
  void badInputNamesTheFieldAndTheRule() {
    IllegalArgumentException nodes =
        assertThrows(IllegalArgumentException.class, () -> LeaseholdCluster.builder().nodes(0));
    assertEquals("nodes: 0 is not between 1 and 9", nodes.getMessage());
    IllegalArgumentException timeout =
        assertThrows(
            IllegalArgumentException.class,
            () -> LeaseholdCluster.builder().readyTimeout(Duration.ZERO));
    assertEquals("readyTimeout: PT0S is not positive", timeout.getMessage());
  }

  @Test
  void anUnknownNodeIsRefusedByName() throws Exception {
    try (LeaseholdCluster node = LeaseholdCluster.start(1)) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> node.kill("n7"));
      assertEquals("node: n7 is not one of [n1]", e.getMessage());
      assertTrue(node.isRunning("n1"));
    }
  }

  private static boolean otherLeader(LeaseholdCluster cluster, String old) {
    return cluster.nodeIds().stream()
        .anyMatch(
            id ->
                !id.equals(old)
                    && cluster.node(id).isLeader()
                    && cluster.node(id).diagnostics().ticker().scheduler().isActive());
  }

  private static long appliedIndex(LeaseholdCluster cluster, String id) {
    return cluster.node(id).ratis().division().getInfo().getLastAppliedIndex();
  }
}
