package io.leasehold.server.raft;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Outcome;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leader tells each follower of a new commit index at once, in an append without entries
 * ({@link ForkSearchingLogAppender}), on real Ratis and gRPC. That an idle cluster's followers
 * apply a lone write at once is {@code ThreeNodeClusterTest.followersApplyAnIsolatedWriteWithoutWaitingForTheNextHeartbeat}.
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
   * follower refuses any append or heartbeat, and each takes commits from pushes. Each push names
   * an entry the follower has already acknowledged, never one still in flight to it: Ratis's
   * follower takes a push's commit index before it has written the appends queued ahead of it
   * (ForkSearchingLogAppender's class comment).
   */
  @Test
  void underLoadFollowersTakeCommitsFromPushesAndRefuseNothing() throws Exception {
    cluster = TestCluster.start(3, dir);
    LeaseholdNode leader = cluster.awaitLeader();
    List<String> refusals = new CopyOnWriteArrayList<>();
    List<String> namedUnacknowledged = new CopyOnWriteArrayList<>();
    Map<String, AtomicInteger> pushesBuilt = new ConcurrentHashMap<>();
    // Per follower, the highest match index it has answered with, as the follower reports handing the
    // answer to gRPC: before the leader can read it. (The leader's own report of an answer comes
    // after Ratis has already moved the match index.)
    Map<String, AtomicLong> acknowledged = new ConcurrentHashMap<>();
    for (LeaseholdNode f : cluster.followers()) {
      acknowledged.put(f.id(), new AtomicLong(-1));
    }
    leader.replicationTrace().listen(new ReplicationTrace.Listener() {
      @Override
      public void appendBuilt(String followerId, long leaderCommit, long lastIndex, boolean heartbeat, long nanos) {
        if (heartbeat && lastIndex >= 0) {
          pushesBuilt.computeIfAbsent(followerId, k -> new AtomicInteger()).incrementAndGet();
          AtomicLong acked = acknowledged.get(followerId);
          // Before the first answer only Ratis's own heartbeats go out (a push needs an acknowledged entry).
          if (acked.get() >= 0 && lastIndex > acked.get()) {
            namedUnacknowledged.add(followerId + ": previous entry " + lastIndex + ", acknowledged up to " + acked.get());
          }
        }
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
      f.replicationTrace().listen(new ReplicationTrace.Listener() {
        @Override
        public void commitReceived(long leaderCommit, long nanos) {
          received.incrementAndGet();
        }

        @Override
        public void replySent(long matchIndex, long nanos) {
          acknowledged.get(f.id()).accumulateAndGet(matchIndex, Math::max);
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
      assertEquals(List.of(), List.copyOf(namedUnacknowledged), "appends without entries naming an entry still in flight");
      await("every node to apply " + last, Duration.ofSeconds(20), () -> cluster.running().stream()
          .allMatch(n -> n.division().getInfo().getLastAppliedIndex() >= last));
    } finally {
      pool.shutdownNow();
    }

    assertEquals(List.of(), refusals, "answers other than SUCCESS");
    for (LeaseholdNode f : cluster.followers()) {
      int built = pushesBuilt.getOrDefault(f.id(), new AtomicInteger()).get();
      // 1,200 writes; Ratis's own heartbeats under load name no previous entry and are not counted.
      assertTrue(built >= 50, "appends without entries naming a previous entry built for " + f.id() + ": " + built);
      assertTrue(pushesReceived.get(f.id()).get() >= 50,
          f.id() + " received " + pushesReceived.get(f.id()).get() + " appends without entries");
    }
  }
}
