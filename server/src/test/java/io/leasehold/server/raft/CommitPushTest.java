package io.leasehold.server.raft;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.TransferLeadershipRequest;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.server.protocol.TermIndex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leader tells each follower of a new commit index at once, in an append without entries
 * ({@link ForkSearchingLogAppender}), on real Ratis and gRPC. That an idle cluster's followers
 * apply a lone write at once is {@code ThreeNodeClusterTest.followersApplyAnIsolatedWriteWithoutWaitingForTheNextHeartbeat}.
 *
 * <p>The rule both tests check ({@link PushRule}): a push may name an entry the follower has not
 * yet acknowledged (one still in flight to it) only once the follower has acknowledged an entry of
 * the leader's term. Before that its log may still hold a stale tail that a queued append is about
 * to replace, and Ratis's follower takes a push's commit index without waiting for the queue.
 */
class CommitPushTest {
  @TempDir
  Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * Under load from several writers, the pushes name only entries the follower holds: no
   * follower refuses any append or heartbeat, and each takes commits from pushes. Once a follower
   * has acknowledged an entry of the leader's term, pushes name the entries just sent to it,
   * still in flight, so that it hears of a commit without waiting for its own sync to be answered.
   */
  @Test
  void underLoadFollowersTakeCommitsFromPushesAndRefuseNothing() throws Exception {
    // Pushes at once, so that they go out under load too (with the default delay the appends carry the commits).
    cluster = TestCluster.start(3, dir, b -> b.commitPushDelay(Duration.ZERO));
    LeaseholdNode leader = cluster.awaitLeader();
    List<String> refusals = new CopyOnWriteArrayList<>();
    // The followers answered before these listeners were set: a push is checked once the follower's
    // first answer since then is known.
    PushRule rule = new PushRule(leader, false);
    leader.diagnostics().replicationTrace().listen(new ReplicationTrace.Listener() {
      @Override
      public void pushBuilt(String followerId, long leaderCommit, long previousIndex, long nanos) {
        rule.pushBuilt(followerId, previousIndex);
      }

      @Override
      public void replyRefused(String followerId, String result, long nextIndex, long nanos) {
        refusals.add(followerId + ": " + result + ", next index " + nextIndex);
      }
    });
    Map<String, AtomicInteger> pushesReceived = new ConcurrentHashMap<>();
    for (LeaseholdNode f : cluster.followers()) {
      AtomicInteger received = new AtomicInteger();
      pushesReceived.put(f.id(), received);
      f.diagnostics().replicationTrace().listen(new ReplicationTrace.Listener() {
        @Override
        public void commitReceived(long leaderCommit, long nanos) {
          received.incrementAndGet();
        }

        @Override
        public void replySent(long matchIndex, long nanos) {
          rule.replySent(f.id(), matchIndex);
        }
      });
    }

    var leases = cluster.leases(leader.id()); // stubs are thread-safe; the cluster's channel map is not
    int writers = 8;
    int perWriter = 150;
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try {
      List<Future<Long>> done = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        int writer = w;
        done.add(pool.submit(() -> {
          long last = 0;
          for (int i = 0; i < perWriter; i++) {
            AcquireResponse r = leases.acquire(acquire("push/load-" + writer + "-" + i, "runner-" + writer, 30));
            assertEquals(Outcome.GRANTED, r.getOutcome());
            last = Math.max(last, r.getRevision());
          }
          return last;
        }));
      }
      long written = 0;
      for (Future<Long> f : done) {
        written = Math.max(written, f.get());
      }
      long last = written;
      // Refusals first: they are the cause when a follower then falls behind for good.
      assertEquals(List.of(), List.copyOf(refusals), "answers other than SUCCESS");
      assertEquals(List.of(), rule.broken(), "pushes naming an entry in flight to a follower not yet known to hold only the leader's entries");
      await("every node to apply " + last, Duration.ofSeconds(20), () -> cluster.running().stream()
          .allMatch(n -> n.division().getInfo().getLastAppliedIndex() >= last));
    } finally {
      pool.shutdownNow();
    }

    assertEquals(List.of(), refusals, "answers other than SUCCESS");
    for (LeaseholdNode f : cluster.followers()) {
      int built = rule.pushes(f.id());
      // 1,200 writes.
      assertTrue(built >= 50, "pushes built for " + f.id() + ": " + built);
      assertTrue(rule.pushesAhead(f.id()) >= 25,
          "pushes naming an entry still in flight to " + f.id() + ": " + rule.pushesAhead(f.id()) + " of " + built);
      assertTrue(pushesReceived.get(f.id()).get() >= 50,
          f.id() + " received " + pushesReceived.get(f.id()).get() + " appends without entries");
    }
  }

  /**
   * A follower that was away while leadership moved comes back holding only entries of an older
   * term. Until it has acknowledged one of the new leader's entries, every push to it names an
   * entry it has acknowledged; after that, pushes may name entries still in flight to it. The
   * first form of the push named the entry before the next index from the start, and so named the
   * entries of the very first append to the returning follower, before it had answered anything.
   */
  @Test
  void aFollowerBackFromAnOlderTermIsPushedOnlyAcknowledgedEntriesUntilItTakesOneOfTheNewTerm() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.commitPushDelay(Duration.ZERO));
    LeaseholdNode first = cluster.awaitLeader();
    for (int i = 0; i < 20; i++) {
      assertEquals(Outcome.GRANTED, cluster.leases(first.id()).acquire(acquire("away/before-" + i, "h", 60)).getOutcome());
    }
    cluster.awaitConverged();
    List<LeaseholdNode> followers = cluster.followers();
    String away = followers.get(0).id();
    String next = followers.get(1).id();
    long awayTerm = first.division().getInfo().getCurrentTerm();
    cluster.stopNode(away);

    // Leadership moves while it is away: its log now ends in an older term than the leader's.
    cluster.cluster(first.id()).transferLeadership(TransferLeadershipRequest.newBuilder().setId(next).build());
    LeaseholdNode leader = cluster.node(next);
    TestCluster.await("the other follower leads", Duration.ofSeconds(30), leader::isLeader);
    for (int i = 0; i < 200; i++) {
      assertEquals(Outcome.GRANTED, cluster.leases(next).acquire(acquire("away/after-" + i, "h", 60)).getOutcome());
    }
    assertTrue(leader.division().getInfo().getCurrentTerm() > awayTerm, "leadership moved to a new term");

    PushRule rule = new PushRule(leader, true);
    leader.diagnostics().replicationTrace().listen(new ReplicationTrace.Listener() {
      @Override
      public void pushBuilt(String followerId, long leaderCommit, long previousIndex, long nanos) {
        if (followerId.equals(away)) {
          rule.pushBuilt(followerId, previousIndex);
        }
      }
    });
    // Its answers are recorded from its first one: the listener is in place before it starts.
    LeaseholdNode back = cluster.startNode(away, node -> node.diagnostics().replicationTrace().listen(new ReplicationTrace.Listener() {
      @Override
      public void replySent(long matchIndex, long nanos) {
        rule.replySent(away, matchIndex);
      }
    }));
    long commit = leader.division().getRaftLog().getLastCommittedIndex();
    TestCluster.await(() -> away + " applied " + commit + " (at " + back.division().getInfo().getLastAppliedIndex() + ")",
        Duration.ofSeconds(30), () -> back.division().getInfo().getLastAppliedIndex() >= commit);
    // Under load, for pushes after it has taken the new term's entries.
    var leases = cluster.leases(next);
    for (int i = 0; i < 300; i++) {
      assertEquals(Outcome.GRANTED, leases.acquire(acquire("away/back-" + i, "h", 60)).getOutcome());
    }
    long last = leader.division().getRaftLog().getLastCommittedIndex();
    TestCluster.await(() -> away + " applied " + last, Duration.ofSeconds(30),
        () -> back.division().getInfo().getLastAppliedIndex() >= last);

    assertEquals(List.of(), rule.broken(), "pushes naming an entry in flight to a follower not yet known to hold only the leader's entries");
    assertTrue(rule.pushes(away) > 0, "no push was built for " + away);
  }

  /**
   * With a push delay, a commit that the next append carries is not pushed: under steady load
   * from concurrent writers the followers hear of commits from the appends, with far fewer pushes
   * than appends. (That a lone write, which no append follows, is still pushed and applied at once
   * is {@code ThreeNodeClusterTest.followersApplyAnIsolatedWriteWithoutWaitingForTheNextHeartbeat},
   * with the default delay.)
   */
  @Test
  void underSteadyLoadAppendsCarryTheCommitsInsteadOfPushes() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.commitPushDelay(Duration.ofMillis(200)));
    LeaseholdNode leader = cluster.awaitLeader();
    AtomicInteger pushes = new AtomicInteger();
    AtomicInteger appends = new AtomicInteger();
    leader.diagnostics().replicationTrace().listen(new ReplicationTrace.Listener() {
      @Override
      public void appendBuilt(String followerId, long leaderCommit, long lastIndex, boolean heartbeat, long nanos) {
        if (!heartbeat) {
          appends.incrementAndGet();
        }
      }

      @Override
      public void pushBuilt(String followerId, long leaderCommit, long previousIndex, long nanos) {
        pushes.incrementAndGet();
      }
    });
    var leases = cluster.leases(leader.id());
    int writers = 8;
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        int writer = w;
        done.add(pool.submit(() -> {
          for (int i = 0; i < 100; i++) {
            assertEquals(Outcome.GRANTED, leases.acquire(acquire("carried/" + writer + "-" + i, "h", 30)).getOutcome());
          }
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    int pushedUnderLoad = pushes.get();
    assertTrue(appends.get() >= 50, "appends under load: " + appends.get());
    assertTrue(pushedUnderLoad * 5 < appends.get(), "pushes under load: " + pushedUnderLoad + " for " + appends.get() + " appends");
  }

  /**
   * Records, per follower, the highest match index it has answered with, as the follower reports
   * handing the answer to gRPC: before the leader can read it (the leader's own report of an
   * answer comes after Ratis has already moved the match index). Checks each push the leader
   * builds against it.
   */
  static final class PushRule {
    private final LeaseholdNode leader;
    private final long term;
    private final boolean fromFirstMessage;
    private final Map<String, AtomicLong> acknowledged = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> pushes = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> ahead = new ConcurrentHashMap<>();
    private final List<String> broken = new CopyOnWriteArrayList<>();

    /**
     * {@code fromFirstMessage}: every answer of the followers is seen, so a push before the first
     * one breaks the rule too; otherwise pushes to a follower are checked from its first answer seen.
     */
    PushRule(LeaseholdNode leader, boolean fromFirstMessage) {
      this.leader = leader;
      this.term = leader.division().getInfo().getCurrentTerm();
      this.fromFirstMessage = fromFirstMessage;
    }

    void replySent(String followerId, long matchIndex) {
      acknowledged.computeIfAbsent(followerId, k -> new AtomicLong(-1)).accumulateAndGet(matchIndex, Math::max);
    }

    /** On the leader's appender thread, for each push it builds. */
    void pushBuilt(String followerId, long previousIndex) {
      pushes.computeIfAbsent(followerId, k -> new AtomicInteger()).incrementAndGet();
      long acked = acknowledged.computeIfAbsent(followerId, k -> new AtomicLong(-1)).get();
      if (previousIndex <= acked || (acked < 0 && !fromFirstMessage)) {
        return;
      }
      ahead.computeIfAbsent(followerId, k -> new AtomicInteger()).incrementAndGet();
      TermIndex ackedEntry = acked < 0 ? null : leader.division().getRaftLog().getTermIndex(acked);
      if (ackedEntry == null || ackedEntry.getTerm() != term) {
        broken.add(followerId + ": previous entry " + previousIndex + ", acknowledged up to " + acked
            + (ackedEntry == null ? "" : " (term " + ackedEntry.getTerm() + ", the leader's is " + term + ")"));
      }
    }

    List<String> broken() {
      return List.copyOf(broken);
    }

    int pushes(String followerId) {
      return pushes.getOrDefault(followerId, new AtomicInteger()).get();
    }

    int pushesAhead(String followerId) {
      return ahead.getOrDefault(followerId, new AtomicInteger()).get();
    }
  }
}
