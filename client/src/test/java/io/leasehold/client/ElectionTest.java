package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.recipes.Election;
import io.leasehold.client.recipes.Leader;
import io.leasehold.client.recipes.LeaderListener;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The election recipe on a three-node cluster: one leader at a time through faults, growing tokens,
 * hand-over.
 */
class ElectionTest {
  @TempDir Path dir;
  TestCluster cluster;
  final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    cluster = Fixtures.stableThreeNodes(dir);
  }

  @AfterEach
  void stop() throws Exception {
    Collections.reverse(closing);
    for (AutoCloseable c : closing) {
      c.close();
    }
    cluster.close();
  }

  /**
   * One term of one candidate: from its takeLeadership callback to its revokeLeadership callback.
   */
  record Term(String candidate, long token, long start, long end) {}

  /** A candidate recording its terms of leadership. */
  final class Candidate implements LeaderListener {
    final String id;
    final Partition partition = new Partition();
    final LeaseholdClient client;
    final Election election;
    final List<Term> terms = new CopyOnWriteArrayList<>();
    volatile long token;
    volatile long since;

    Candidate(String id) {
      this.id = id;
      this.client =
          Fixtures.client(
              cluster, b -> b.holder(id).sessionTtl(Duration.ofSeconds(3)).interceptor(partition));
      closing.add(client);
      this.election = client.election("election/e1");
      election.addListener(this);
    }

    @Override
    public synchronized void takeLeadership(long token) {
      this.token = token;
      this.since = System.nanoTime();
    }

    @Override
    public synchronized void revokeLeadership() {
      terms.add(new Term(id, token, since, System.nanoTime()));
      token = 0;
    }

    synchronized Optional<Term> open() {
      return token == 0
          ? Optional.empty()
          : Optional.of(new Term(id, token, since, Long.MAX_VALUE));
    }
  }

  /** Samples every candidate's isLeader() and counts any instant where two said yes. */
  final class Sampler implements AutoCloseable {
    final AtomicInteger overlaps = new AtomicInteger();
    final AtomicBoolean running = new AtomicBoolean(true);
    final Thread thread;

    Sampler(List<Candidate> candidates) {
      thread =
          new Thread(
              () -> {
                while (running.get()) {
                  if (candidates.stream().filter(c -> c.election.isLeader()).count() > 1) {
                    overlaps.incrementAndGet();
                  }
                  Thread.onSpinWait();
                }
              },
              "leader-sampler");
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public void close() throws InterruptedException {
      running.set(false);
      thread.join();
    }
  }

  static void assertTermsNeverOverlapAndTokensGrow(List<Candidate> candidates) {
    List<Term> all = new ArrayList<>();
    for (Candidate c : candidates) {
      all.addAll(c.terms);
      c.open().ifPresent(all::add);
    }
    all.sort(Comparator.comparingLong(Term::start));
    for (int i = 1; i < all.size(); i++) {
      Term prev = all.get(i - 1);
      Term next = all.get(i);
      assertTrue(prev.end() < next.start(), "terms overlap: " + prev + " and " + next);
      if (!prev.candidate().equals(next.candidate())) {
        assertTrue(
            next.token() > prev.token(),
            "a new leader's token is larger: " + prev + " then " + next);
      }
    }
  }

  static Candidate leaderAmong(List<Candidate> candidates) {
    return candidates.stream().filter(c -> c.election.isLeader()).findFirst().orElseThrow();
  }

  @Test
  void threeCandidatesKeepOneLeaderThroughALeaderNodeKillAndAPartitionedLeaderClient()
      throws Exception {
    List<Candidate> candidates =
        List.of(new Candidate("cand-a"), new Candidate("cand-b"), new Candidate("cand-c"));
    List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
    try (LeaseholdClient watcher = Fixtures.client(cluster);
        Watch observing =
            watcher.election("election/e1").observe(seen::add).get(20, TimeUnit.SECONDS);
        Sampler sampler = new Sampler(candidates)) {
      List<CompletableFuture<Lease>> campaigns = new ArrayList<>();
      for (Candidate c : candidates) {
        campaigns.add(c.election.campaign(c.id + ":8080"));
      }
      Fixtures.await(
          "one candidate leads",
          Duration.ofSeconds(20),
          () -> candidates.stream().anyMatch(c -> c.election.isLeader()));
      Candidate before = leaderAmong(candidates);
      long beforeToken = before.election.token().orElseThrow();

      // The cluster's leader node dies. The new leader node extends the lease, so the same
      // candidate
      // normally keeps leading with the same token; if the failover outlasted its 3 s session on a
      // loaded machine, another candidate leads with a larger token. Either way one leader, fenced.
      String leaderNode = cluster.awaitLeader().id();
      cluster.stopNode(leaderNode);
      cluster.awaitLeader();
      Fixtures.await(
          "a candidate leads after the leader node died",
          Duration.ofSeconds(30),
          () ->
              candidates.stream()
                  .anyMatch(
                      c ->
                          c.election.isLeader()
                              && c.election.token().isPresent()
                              && c.client
                                  .blocking()
                                  .get("election/e1")
                                  .map(l -> l.token() == c.election.token().getAsLong())
                                  .orElse(false)));
      Candidate first = leaderAmong(candidates);
      long firstToken = first.election.token().orElseThrow();
      assertTrue(
          first == before ? firstToken == beforeToken : firstToken > beforeToken,
          "the same leader keeps its token, a new one has a larger token: "
              + beforeToken
              + " then "
              + firstToken);
      assertEquals(
          Optional.of(new Leader(first.id, firstToken, Optional.of(first.id + ":8080"))),
          watcher.election("election/e1").leader().get(20, TimeUnit.SECONDS));

      // The leading client is cut off: it stops leading at JEOPARDY, and another candidate takes
      // over later.
      first.partition.cut();
      Fixtures.await(
          "the cut-off leader stops leading",
          Duration.ofSeconds(10),
          () -> !first.election.isLeader());
      assertTrue(
          first.election.leadership().isEmpty()
              || first.election.leadership().get().state() != LeaseState.HELD);
      Fixtures.await(
          "another candidate leads",
          Duration.ofSeconds(30),
          () -> candidates.stream().anyMatch(c -> c != first && c.election.isLeader()));
      Candidate second = leaderAmong(candidates);
      assertTrue(second.election.token().orElseThrow() > firstToken);
      first.partition.heal();

      // The observer saw the first leader, its end, and the second leader, in order.
      long secondToken = second.election.token().orElseThrow();
      Fixtures.await(
          () -> "the observer saw the hand-over: " + seen,
          Duration.ofSeconds(10),
          () -> seen.stream().anyMatch(l -> l.map(x -> x.token() == secondToken).orElse(false)));
      List<Long> tokens =
          seen.stream().filter(Optional::isPresent).map(l -> l.get().token()).toList();
      assertEquals(
          List.of(firstToken, secondToken),
          tokens.subList(tokens.indexOf(firstToken), tokens.size()));
      assertTrue(
          seen.contains(Optional.empty()),
          "the observer saw the leadership end before the next: " + seen);
      assertEquals(0, sampler.overlaps.get(), "two candidates said isLeader() at once");
      assertTermsNeverOverlapAndTokensGrow(candidates);
      campaigns.forEach(f -> f.cancel(false));
    }
  }

  @Test
  void resigningHandsLeadershipToTheNextCandidateAndObserversSeeEachChange() throws Exception {
    List<Candidate> candidates =
        List.of(new Candidate("cand-r1"), new Candidate("cand-r2"), new Candidate("cand-r3"));
    List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
    try (LeaseholdClient watcher = Fixtures.client(cluster);
        Watch observing =
            watcher.election("election/e1").observe(seen::add).get(20, TimeUnit.SECONDS);
        Sampler sampler = new Sampler(candidates)) {
      assertEquals(List.of(Optional.empty()), seen, "the observer is told no one leads yet");
      for (Candidate c : candidates) {
        c.election.campaign(c.id);
      }
      List<Long> leaderTokens = new ArrayList<>();
      for (int round = 0; round < 3; round++) {
        int resigned = round;
        Fixtures.await(
            "a leader in round " + round,
            Duration.ofSeconds(20),
            () ->
                candidates.stream().filter(c -> c.election.isLeader()).count() == 1
                    && candidates.stream().filter(c -> !c.terms.isEmpty()).count() == resigned);
        Candidate leader = leaderAmong(candidates);
        long token = leader.election.token().orElseThrow();
        leaderTokens.add(token);
        Fixtures.await(
            "the observer saw token " + token,
            Duration.ofSeconds(10),
            () ->
                seen.stream()
                    .anyMatch(
                        l ->
                            l.map(x -> x.token() == token && x.holder().equals(leader.id))
                                .orElse(false)));
        leader.election.resign().get(20, TimeUnit.SECONDS);
        assertFalse(leader.election.isLeader());
      }
      Fixtures.await(
          "no one leads after all resigned",
          Duration.ofSeconds(10),
          () -> seen.get(seen.size() - 1).isEmpty());
      assertEquals(
          leaderTokens.stream().sorted().toList(),
          leaderTokens,
          "each new leader's token is larger");
      assertEquals(3, leaderTokens.stream().distinct().count());
      assertEquals(0, sampler.overlaps.get(), "two candidates said isLeader() at once");
      assertTermsNeverOverlapAndTokensGrow(candidates);
      assertEquals(
          Optional.empty(), watcher.election("election/e1").leader().get(20, TimeUnit.SECONDS));
    }
  }
}
