package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.staleGet;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.util.Durations;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.SetPolicyRequest;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Lock-delay is replicated state, lifted only by the leader's LiftLockDelays: it outlives the
 * leader that applied the expiry, and the new leader lifts it after giving it a full delay.
 */
class LockDelayFailoverTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void lockDelayAfterAnExpiryHoldsOnEveryNodeAfterALeaderChange() throws Exception {
    cluster = TestCluster.start(3, dir);
    String entry = cluster.followers().get(0).id();
    cluster
        .admin(entry)
        .setPolicy(
            SetPolicyRequest.newBuilder()
                .setNamespace("lock")
                .setPolicy(Policy.newBuilder().setLockDelay(Requests.seconds(60)))
                .build());
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(entry).acquire(acquire("lock/job", "runner-1", 2)).getOutcome());
    LeaseholdNode oldLeader = cluster.awaitLeader();
    await(
        "the lease expires",
        Duration.ofSeconds(15),
        () -> !cluster.leases(oldLeader.id()).get(staleGet("lock/job")).getFound());
    cluster.awaitConverged();

    cluster.stopNode(oldLeader.id());
    LeaseholdNode newLeader = cluster.awaitLeader();
    assertNotEquals(oldLeader.id(), newLeader.id());
    for (LeaseholdNode node : cluster.running()) {
      AcquireResponse r = cluster.leases(node.id()).acquire(acquire("lock/job", "runner-2", 10));
      assertEquals(Outcome.REJECTED, r.getOutcome(), node.id() + ": " + r);
      assertEquals(RejectReason.LOCK_DELAY, r.getRejection().getReason());
      long left = Durations.toMillis(r.getRejection().getRetryAfter());
      assertTrue(
          left > 30_000 && left <= 60_000,
          "about a minute left on " + node.id() + ": " + left + " ms");
      assertFalse(cluster.leases(node.id()).get(staleGet("lock/job")).getFound());
    }
    // A name that merely was released has no delay, under the new leader too.
    AcquireResponse other =
        cluster.leases(newLeader.id()).acquire(acquire("lock/other", "runner-1", 10));
    cluster
        .leases(newLeader.id())
        .release(Requests.release("lock/other", other.getLease().getToken()));
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(newLeader.id()).acquire(acquire("lock/other", "runner-2", 10)).getOutcome());
  }

  @Test
  void aNewLeaderGivesTheBarAFullDelayAndThenLiftsIt() throws Exception {
    long delayMillis = 8_000;
    cluster = TestCluster.start(3, dir);
    String entry = cluster.followers().get(0).id();
    cluster
        .admin(entry)
        .setPolicy(
            SetPolicyRequest.newBuilder()
                .setNamespace("lock")
                .setPolicy(Policy.newBuilder().setLockDelay(Durations.fromMillis(delayMillis)))
                .build());
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(entry).acquire(acquire("lock/failover", "runner-1", 2)).getOutcome());
    LeaseholdNode oldLeader = cluster.awaitLeader();
    await(
        "the lease expires",
        Duration.ofSeconds(15),
        () -> !cluster.leases(oldLeader.id()).get(staleGet("lock/failover")).getFound());
    long expired = System.nanoTime();
    cluster.awaitConverged();

    cluster.stopNode(oldLeader.id());
    LeaseholdNode newLeader = cluster.awaitLeader();
    assertNotEquals(oldLeader.id(), newLeader.id());
    // The new leader tracks the bar it found in the state, due a full delay after its promotion.
    await(
        "the new leader tracks the bar",
        Duration.ofSeconds(5),
        () ->
            newLeader
                .diagnostics()
                .ticker()
                .scheduler()
                .remainingNanos(
                    io.leasehold.statemachine.core.TimedBar.Kind.LOCK_DELAY,
                    "lock/failover",
                    System.nanoTime())
                .isPresent());
    for (LeaseholdNode node : cluster.running()) {
      AcquireResponse r =
          cluster.leases(node.id()).acquire(acquire("lock/failover", "runner-2", 10));
      assertEquals(RejectReason.LOCK_DELAY, r.getRejection().getReason(), node.id() + ": " + r);
    }
    String follower =
        cluster.running().stream().filter(n -> n != newLeader).findFirst().orElseThrow().id();
    AcquireResponse granted =
        TestCluster.eventually(
            "the new leader lifts the bar",
            Duration.ofSeconds(delayMillis / 1000 + 15),
            () -> {
              AcquireResponse r =
                  cluster.leases(follower).acquire(acquire("lock/failover", "runner-2", 10));
              return r.getOutcome() == Outcome.GRANTED
                  ? java.util.Optional.of(r)
                  : java.util.Optional.empty();
            });
    long waited = (System.nanoTime() - expired) / 1_000_000;
    assertTrue(
        waited >= delayMillis, "never earlier than the delay after the ending: " + waited + " ms");
    assertEquals("runner-2", granted.getLease().getHolder());
  }
}
