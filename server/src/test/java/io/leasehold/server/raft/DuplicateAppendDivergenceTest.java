package io.leasehold.server.raft;

import static io.leasehold.server.Requests.acquire;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.TestCluster;
import io.leasehold.server.raft.PeerTraffic.Held;
import io.leasehold.server.raft.PeerTraffic.Verdict;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.apache.ratis.server.protocol.TermIndex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * A deposed leader rejoins with its own uncommitted tail, and the new leader's append that would
 * replace the tail (A) is delivered late, right before the leader's resend of the same entries and
 * more (A'). With Ratis's append-entries compose on, the follower skips A' as a duplicate of the
 * queued A ({@code RatisDuplicateAppendTest}) and still answers SUCCESS naming A''s last entry,
 * which its log does not hold: the leader counts it towards committing entries it lacks, and an
 * acknowledged write can be lost with the leader. With the node's settings (compose off) every
 * SUCCESS names only entries the follower holds, and the replicas end identical.
 *
 * <p>Delivery is controlled ({@link PeerTraffic}), not left to timing: the rejoining node holds A;
 * the leader's later appends reach it and are refused (the old entry at A's index does not match),
 * which sends the leader back to A's first index; those resends are lost until one carries more
 * than A, all committed (A'), which is held too; then A and A' are delivered back to back. A
 * carries some 3 MB, so that its write is still under way when A' arrives.
 */
class DuplicateAppendDivergenceTest {
  /** The deposed leader's uncommitted tail: longer than all the new leader appends. */
  private static final int TAIL = 80;

  /** Entries of some 100 KB the new leader commits before the old one rejoins: A carries them. */
  private static final int BIG = 30;

  /** Writes committed by the new leader while A is held, so that A' carries more than A. */
  private static final int MORE = 10;

  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aRejoiningNodeAcknowledgesOnlyWhatItHoldsAndEndsWithTheLeadersHistory() throws Exception {
    List<String> lies = replay(b -> b);
    assertEquals(List.of(), lies, "SUCCESS answers naming entries the follower's log did not hold");
  }

  /**
   * The same schedule with Ratis's default (compose on): the rejoining node acknowledges entries it
   * does not hold. Run by hand ({@code -Dleasehold.replay.compose=true}) to see the bug.
   */
  @Test
  @EnabledIfSystemProperty(named = "leasehold.replay.compose", matches = "true")
  void withRatisComposeOnTheRejoiningNodeAcknowledgesEntriesItDoesNotHold() throws Exception {
    List<String> lies =
        replay(b -> b.raftProperty("raft.server.log.append-entries.compose.enabled", "true"));
    lies.forEach(System.out::println);
    assertTrue(!lies.isEmpty(), "expected a SUCCESS answer naming an entry the follower lacks");
  }

  /**
   * Runs the schedule; returns the SUCCESS answers of the rejoining node that named entries its log
   * lacked.
   */
  private List<String> replay(UnaryOperator<NodeConfig.Builder> settings) throws Exception {
    cluster = TestCluster.start(3, dir, b -> settings.apply(TestCluster.steadyElections(b)));
    LeaseholdNode old = cluster.awaitLeader();
    String oldId = old.id();
    for (int i = 0; i < 5; i++) {
      assertEquals(
          Outcome.GRANTED,
          cluster.leases(oldId).acquire(acquire("before/" + i, "h", 120)).getOutcome());
    }
    cluster.awaitConverged();

    // Alone, the old leader appends what it is sent and commits none of it.
    for (LeaseholdNode f : cluster.followers()) {
      cluster.stopNode(f.id());
    }
    long forkAt = old.ratis().division().getRaftLog().getLastCommittedIndex();
    for (int i = 0; i < TAIL; i++) {
      old.replicator()
          .proposeHere(LogCommand.newBuilder().setAcquire(acquire("lost/" + i, "h", 120)).build());
    }
    TestCluster.await(
        "the old leader appended its uncommitted tail",
        Duration.ofSeconds(20),
        () -> old.ratis().division().getRaftLog().getFlushIndex() >= forkAt + TAIL);
    assertEquals(
        forkAt,
        old.ratis().division().getRaftLog().getLastCommittedIndex(),
        "nothing after the fork may commit");
    cluster.stopNode(oldId);

    // The other two elect a leader, which commits large entries: the first append from the fork
    // to the old leader will carry them all.
    for (String id : cluster.ids()) {
      if (!id.equals(oldId)) {
        cluster.startNode(id);
      }
    }
    LeaseholdNode leader = cluster.awaitLeader();
    String leaderId = leader.id();
    String padding = "x".repeat(100_000);
    List<CompletableFuture<?>> big = new CopyOnWriteArrayList<>();
    for (int i = 0; i < BIG; i++) {
      AcquireRequest a =
          acquire("big/" + i, "h", 120).toBuilder()
              .setRequestId(padding)
              .build(); // applied or refused, the entry is large
      big.add(leader.replicator().proposeHere(LogCommand.newBuilder().setAcquire(a).build()));
    }
    CompletableFuture.allOf(big.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

    // The old leader comes back (see the class comment); heartbeats pass, so it stays a follower.
    AtomicReference<PeerTraffic.Append> first = new AtomicReference<>();
    AtomicReference<PeerTraffic.Append> resend = new AtomicReference<>();
    List<String> lies = new CopyOnWriteArrayList<>();
    LeaseholdNode back =
        cluster.startNode(
            oldId,
            node -> {
              node.diagnostics()
                  .peerTraffic()
                  .rule(
                      a -> {
                        if (a.heartbeat() || !a.from().equals(leaderId)) {
                          return Verdict.DELIVER;
                        }
                        PeerTraffic.Append held = first.get();
                        if (held == null) {
                          if (a.firstIndex() == forkAt + 1) {
                            first.set(a);
                            return Verdict.HOLD;
                          }
                          return Verdict.DELIVER; // the walk back to the fork
                        }
                        if (resend.get() != null) {
                          return Verdict.DROP;
                        }
                        if (a.firstIndex() == held.firstIndex()) {
                          // The one to hold carries more than A, all of it committed (the leader
                          // has gone quiet);
                          // an earlier one would replace the tail, so it is lost instead.
                          if (a.lastIndex() > held.lastIndex()
                              && a.leaderCommit() >= a.lastIndex()) {
                            resend.set(a);
                            return Verdict.HOLD;
                          }
                          return Verdict.DROP;
                        }
                        return Verdict
                            .DELIVER; // refused: the old entry at A's index does not match
                      });
              // Every SUCCESS answer must name an entry this node's log holds, in the leader's
              // term.
              node.diagnostics()
                  .replicationTrace()
                  .listen(
                      new ReplicationTrace.Listener() {
                        @Override
                        public void replySent(long matchIndex, long nanos) {
                          if (matchIndex < 0) {
                            return; // a heartbeat's answer names no entry
                          }
                          TermIndex held =
                              node.ratis().division().getRaftLog().getTermIndex(matchIndex);
                          TermIndex leaders =
                              leader.ratis().division().getRaftLog().getTermIndex(matchIndex);
                          if (held == null || !held.equals(leaders)) {
                            lies.add(
                                "SUCCESS naming index "
                                    + matchIndex
                                    + ": the follower holds "
                                    + held
                                    + ", the leader "
                                    + leaders);
                          }
                        }
                      });
            });
    TestCluster.await(
        "the leader's first append from the fork reaches the rejoining node",
        Duration.ofSeconds(30),
        () -> first.get() != null);
    assertTrue(
        first.get().lastIndex() >= forkAt + BIG && first.get().lastIndex() < forkAt + TAIL,
        "A carries the large entries and ends inside the old tail: " + first.get());

    // The leader commits more (with the third node) while A goes unanswered.
    for (int i = 0; i < MORE; i++) {
      assertEquals(
          Outcome.GRANTED,
          cluster.leases(leaderId).acquire(acquire("after/" + i, "h", 120)).getOutcome());
    }
    TestCluster.await(
        "the leader resends from the fork with more entries, all committed (A')",
        Duration.ofSeconds(60),
        () -> resend.get() != null);
    assertTrue(
        resend.get().lastIndex() < forkAt + TAIL, "A' ends inside the old tail: " + resend.get());

    List<Held> held = back.diagnostics().peerTraffic().takeHeld();
    assertEquals(2, held.size(), "held: " + held);
    back.diagnostics().peerTraffic().rule(null);
    held.get(0).deliver(); // A, then A' at once: A's entries are still on their way to the log
    held.get(1).deliver();

    // The rejoining node must end with the leader's history: none of its own lost/ leases.
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(leaderId).acquire(acquire("after/last", "h", 120)).getOutcome());
    long target = leader.ratis().division().getRaftLog().getLastCommittedIndex();
    TestCluster.await(
        () ->
            "the rejoining node applies "
                + target
                + " (at "
                + back.ratis().division().getInfo().getLastAppliedIndex()
                + ") or a lease of its own tail",
        Duration.ofSeconds(60),
        () ->
            back.ratis().division().getInfo().getLastAppliedIndex() >= target
                || lostOn(oldId).getLeasesCount() > 0);
    ListResponse lost = lostOn(oldId);
    assertEquals(
        0,
        lost.getLeasesCount(),
        "the rejoining node applied entries of its own uncommitted tail: "
            + lost.getLeasesList().stream().map(l -> l.getName()).toList());
    cluster.awaitConverged();
    assertArrayEquals(
        TestCluster.dump(leader), TestCluster.dump(back), "the replicas' states differ");
    return lies;
  }

  private ListResponse lostOn(String id) {
    return cluster
        .leases(id)
        .list(ListRequest.newBuilder().setPrefix("lost/").setStale(true).build());
  }
}
