package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static io.leasehold.server.Requests.staleGet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Timestamp;
import com.google.protobuf.util.Durations;
import com.google.protobuf.util.Timestamps;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.DeadlineExtension;
import io.leasehold.proto.v1.DeadlineSource;
import io.leasehold.proto.v1.EndedLease;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.RenewResult;
import io.leasehold.proto.v1.SetPolicyRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lease read shows the deadline the leader's expiry acts on. After a restart or a leader change
 * the leader gives every lease a full TTL from when it took over, which the stamped {@code
 * expires_at} does not know; the read says so, and when the lease ends it ends then.
 */
class ReadDeadlineTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static long micros(Timestamp t) {
    return Timestamps.toMicros(t);
  }

  static long wallMicros() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  /** The deadline the leader's scheduler holds for {@code name} now, on the wall clock. */
  static long schedulerDeadlineMicros(LeaseholdNode leader, String name) {
    long wall = wallMicros();
    long remaining =
        leader
            .diagnostics()
            .ticker()
            .scheduler()
            .remainingNanos(name, System.nanoTime())
            .orElseThrow();
    return wall + remaining / 1_000;
  }

  /** The lease as a read on {@code node} shows it, once it shows the leader's deadline. */
  Lease leaderDeadlineOn(String node, String name) {
    return TestCluster.eventually(
        "a read on " + node + " shows the leader's deadline of " + name,
        Duration.ofSeconds(20),
        () -> {
          Lease l = cluster.leases(node).get(get(name)).getLease();
          return l.getDeadlineSource() == DeadlineSource.DEADLINE_SOURCE_LEADER
              ? Optional.of(l)
              : Optional.empty();
        });
  }

  @Test
  void theDeadlineShownAfterARestartIsTheOneTheExpiryActsOn() throws Exception {
    cluster = TestCluster.start(1, dir);
    String node = cluster.awaitLeader().id();
    AcquireResponse granted = cluster.leases(node).acquire(acquire("lock/restart", "runner-1", 4));
    assertEquals(Outcome.GRANTED, granted.getOutcome());
    Lease before = cluster.leases(node).get(get("lock/restart")).getLease();
    assertEquals(DeadlineSource.DEADLINE_SOURCE_LEADER, before.getDeadlineSource());
    assertEquals(0, before.getExtensionsCount(), "granted by this leader: counted from the grant");

    cluster.stopNode(node);
    LeaseholdNode restarted = cluster.startNode(node);
    cluster.awaitLeader();
    Lease after = leaderDeadlineOn(node, "lock/restart");
    long shown = micros(after.getDeadline());
    long acted = schedulerDeadlineMicros(restarted, "lock/restart");

    // The stamp is as it was; the deadline is the one the restarted leader's expiry counts to.
    assertEquals(before.getExpiresAt(), after.getExpiresAt());
    assertTrue(
        Math.abs(shown - acted) < 50_000, "shown " + shown + " vs the expiry's " + acted + " (µs)");
    assertTrue(shown > micros(after.getExpiresAt()), "extended past the stamped end");
    // Why: the leader change (and any stall of the restarted leader since, on a busy machine).
    DeadlineExtension e = after.getExtensions(0);
    assertEquals(DeadlineExtension.Reason.LEADER_CHANGE, e.getReason(), after::toString);
    assertTrue(e.getTerm() > 1, "the restarted leader's term: " + e.getTerm());
    long by =
        after.getExtensionsList().stream().mapToLong(x -> Durations.toMicros(x.getBy())).sum();
    long stalled = by - Durations.toMicros(e.getBy());
    assertTrue(
        Math.abs(shown - micros(after.getExpiresAt()) - by) < 1_000,
        "by: from the stamped end to the deadline");
    assertTrue(
        Math.abs(micros(e.getAt()) + Durations.toMicros(after.getTtl()) + stalled - shown) < 50_000,
        "a full TTL from when the leader took over");

    // The lease ends when the read said, not at the stamped expires_at.
    EndedLease ended =
        TestCluster.eventually(
            "lock/restart expires",
            Duration.ofSeconds(30),
            () ->
                cluster
                    .admin(node)
                    .history(HistoryRequest.newBuilder().setName("lock/restart").build())
                    .getLeasesList()
                    .stream()
                    .findFirst());
    assertEquals(Event.Reason.REASON_EXPIRED, ended.getReason());
    long endedAt = micros(ended.getEndedAt());
    assertTrue(
        endedAt >= shown - 5_000,
        "never before the deadline shown: ended " + endedAt + ", shown " + shown);
    assertTrue(
        endedAt - shown < 2_000_000,
        "about at the deadline shown (a tick and an entry later): " + (endedAt - shown) + " µs");
    assertTrue(endedAt - micros(after.getExpiresAt()) > by / 2, "well after the stamped end");
  }

  @Test
  void aFollowerShowsTheNewLeadersDeadlineAndAStaleFollowerReadSaysItIsAnEstimate()
      throws Exception {
    cluster = TestCluster.start(3, dir, TestCluster::steadyElections);
    String entry = cluster.followers().get(0).id();
    cluster
        .admin(entry)
        .setPolicy(
            SetPolicyRequest.newBuilder()
                .setNamespace("lock")
                .setPolicy(Policy.newBuilder().setGracePeriod(Durations.fromMillis(1500)))
                .build());
    long token =
        cluster
            .leases(entry)
            .acquire(acquire("lock/failover", "runner-1", 20))
            .getLease()
            .getToken();
    LeaseholdNode oldLeader = cluster.awaitLeader();
    cluster.awaitConverged();

    cluster.stopNode(oldLeader.id());
    LeaseholdNode leader = cluster.awaitLeader();
    assertNotEquals(oldLeader.id(), leader.id());
    String follower = cluster.followers().get(0).id();

    Lease read = leaderDeadlineOn(follower, "lock/failover");
    long acted = schedulerDeadlineMicros(leader, "lock/failover");
    long shown = micros(read.getDeadline());
    assertTrue(
        shown <= acted + 5_000 && acted - shown < 200_000,
        "the follower asked the leader: at most a round trip early, never late ("
            + (acted - shown)
            + " µs)");
    assertEquals(
        DeadlineExtension.Reason.LEADER_CHANGE, read.getExtensions(0).getReason(), read::toString);
    assertEquals(
        leader.ratis().division().getInfo().getCurrentTerm(), read.getExtensions(0).getTerm());
    assertTrue(shown > micros(read.getExpiresAt()) + 1_500_000, "later than expires_at + grace");
    Lease listed =
        cluster
            .leases(follower)
            .list(ListRequest.newBuilder().setPrefix("lock/").build())
            .getLeases(0);
    assertEquals(DeadlineSource.DEADLINE_SOURCE_LEADER, listed.getDeadlineSource());
    assertEquals(DeadlineExtension.Reason.LEADER_CHANGE, listed.getExtensions(0).getReason());

    // A stale read on a follower does not wait for anyone: the estimate, and it says so.
    Lease stale = cluster.leases(follower).get(staleGet("lock/failover")).getLease();
    assertEquals(DeadlineSource.DEADLINE_SOURCE_ESTIMATE, stale.getDeadlineSource());
    assertEquals(
        micros(stale.getExpiresAt()) + 1_500_000,
        micros(stale.getDeadline()),
        "expires_at + grace");
    assertEquals(0, stale.getExtensionsCount());

    // A renewal counts from itself: its reply's deadline is expires_at + grace, and reads show no
    // extension.
    RenewResult renewed =
        cluster.leases(follower).renew(Requests.renew("lock/failover", token)).getResults(0);
    assertEquals(Outcome.RENEWED, renewed.getOutcome());
    assertEquals(micros(renewed.getExpiresAt()) + 1_500_000, micros(renewed.getDeadline()));
    // A follower counts the leader's remaining time from when it asked: its deadline may be early
    // by the ask's round trip, which the read's own duration bounds.
    java.util.concurrent.atomic.AtomicLong readMicros =
        new java.util.concurrent.atomic.AtomicLong();
    Lease fresh =
        TestCluster.eventually(
            "the renewal shows",
            Duration.ofSeconds(10),
            () -> {
              long start = System.nanoTime();
              Lease l = cluster.leases(follower).get(get("lock/failover")).getLease();
              readMicros.set((System.nanoTime() - start) / 1_000);
              boolean renewedSince =
                  l.getExtensionsList().stream()
                      .noneMatch(x -> x.getReason() == DeadlineExtension.Reason.LEADER_CHANGE);
              return l.getDeadlineSource() == DeadlineSource.DEADLINE_SOURCE_LEADER && renewedSince
                  ? Optional.of(l)
                  : Optional.empty();
            });
    long freshActed = schedulerDeadlineMicros(leader, "lock/failover");
    assertTrue(
        Math.abs(micros(fresh.getDeadline()) - freshActed) < 200_000,
        "the leader's deadline after the renewal");
    assertTrue(
        micros(fresh.getDeadline()) >= micros(renewed.getDeadline()) - 5_000 - readMicros.get(),
        "the leader counts from when it applied the renewal: never sooner than the reply said,"
            + " but for the follower's ask of "
            + readMicros.get()
            + " µs");
  }
}
