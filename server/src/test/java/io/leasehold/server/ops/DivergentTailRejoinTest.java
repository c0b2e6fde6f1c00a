package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.staleGet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.TransferLeadershipRequest;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.raftlog.RaftLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A leader cut off from its followers keeps appending the writes it is sent; none of them commit.
 * When it comes back, the new leader must find where the two logs part and overwrite that tail.
 * Ratis steps back one entry per INCONSISTENCY answer and counts each answer as an error; with its
 * default retry policy it sleeps 1 s and then 5 s between tries after ten in a row, and a tail of a
 * few hundred entries took tens of minutes in the fault tests' soak. The node sets the appender's
 * retry policy so that the first thousand tries follow at once ({@code RaftSettings}): the walk
 * back is one round trip an entry, a few hundred milliseconds here.
 */
class DivergentTailRejoinTest {
  /**
   * Entries on each side of the fork: Ratis's default retry policy would need some 30 minutes for
   * this many.
   */
  private static final int TAIL = 400;

  /** One round trip an entry: seconds, even on a busy machine. */
  private static final Duration REJOIN_BOUND = Duration.ofSeconds(20);

  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aDeposedLeadersUncommittedTailIsReplacedWithinSeconds() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.maxPendingWrites(TAIL * 2));
    LeaseholdNode old = cluster.awaitLeader();
    String oldId = old.id();
    for (int i = 0; i < 10; i++) {
      assertEquals(
          Outcome.GRANTED,
          cluster.leases(oldId).acquire(acquire("before/" + i, "h", 60)).getOutcome());
    }
    cluster.awaitConverged();

    // Alone, the old leader appends every write it is sent and commits none of them.
    for (LeaseholdNode f : cluster.followers()) {
      cluster.stopNode(f.id());
    }
    long forkAt = old.ratis().division().getRaftLog().getLastCommittedIndex();
    // Proposed one entry each (the API would batch writes that wait behind one in flight).
    for (int i = 0; i < TAIL; i++) {
      old.replicator()
          .proposeHere(LogCommand.newBuilder().setAcquire(acquire("lost/" + i, "h", 60)).build());
    }
    RaftLog oldLog = old.ratis().division().getRaftLog();
    TestCluster.await(
        "the old leader appended its uncommitted tail",
        Duration.ofSeconds(20),
        () -> oldLog.getFlushIndex() >= forkAt + TAIL);
    assertEquals(forkAt, oldLog.getLastCommittedIndex(), "nothing after the fork may commit");
    cluster.stopNode(oldId);

    // The other two elect a leader and commit more than the old tail holds.
    for (String id : cluster.ids()) {
      if (!id.equals(oldId)) {
        cluster.startNode(id);
      }
    }
    LeaseholdNode fresh = cluster.awaitLeader();
    for (int i = 0; i < TAIL + 20; i++) {
      assertEquals(
          Outcome.GRANTED,
          cluster.leases(fresh.id()).acquire(acquire("after/" + i, "h", 60)).getOutcome());
    }

    // Leadership moves to the other survivor, which starts its view of the absent node at its own
    // log end, as a leader does that took over while that node was away: from there the walk back
    // to the fork is the whole length of the tail.
    String other =
        cluster.ids().stream()
            .filter(id -> !id.equals(oldId) && !id.equals(fresh.id()))
            .findFirst()
            .orElseThrow();
    cluster
        .cluster(fresh.id())
        .transferLeadership(TransferLeadershipRequest.newBuilder().setId(other).build());
    LeaseholdNode leader = cluster.node(other);
    TestCluster.await(
        "the other survivor leads",
        Duration.ofSeconds(30),
        () -> leader.isLeader() && leader.diagnostics().ticker().scheduler().isActive());
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(other).acquire(acquire("after/moved", "h", 60)).getOutcome());

    // The old leader comes back with its tail; the leader must find the fork and overwrite the
    // tail.
    long t0 = System.nanoTime();
    LeaseholdNode back = cluster.startNode(oldId);
    assertTrue(
        back.ratis().division().getRaftLog().getNextIndex() > forkAt + TAIL,
        "the tail survived the restart");
    long commit = leader.ratis().division().getRaftLog().getLastCommittedIndex();
    TestCluster.await(
        () ->
            "the rejoined node applied "
                + commit
                + " (at "
                + back.ratis().division().getInfo().getLastAppliedIndex()
                + ")",
        REJOIN_BOUND,
        () -> back.ratis().division().getInfo().getLastAppliedIndex() >= commit);
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    System.out.printf("divergent tail of %d entries replaced in %d ms%n", TAIL, ms);

    // It now holds the new history, not its own: no lost/ lease (none was ever applied there: they
    // live 60 s), every after/ lease.
    ListResponse lost =
        cluster
            .leases(oldId)
            .list(ListRequest.newBuilder().setPrefix("lost/").setStale(true).build());
    assertEquals(
        0, lost.getLeasesCount(), "leases from the replaced tail: " + lost.getLeasesList());
    for (int i = 0; i < TAIL; i += 97) {
      assertTrue(cluster.leases(oldId).get(staleGet("after/" + i)).getFound(), "after/" + i);
    }
  }
}
