package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.seconds;
import static io.leasehold.server.Requests.staleGet;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcceptTransferRequest;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.CreateSessionRequest;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.KeepAliveRequest;
import io.leasehold.proto.v1.KeepAliveResult;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.TransferRequest;
import io.leasehold.proto.v1.TransferResponse;
import io.leasehold.statemachine.core.TimedBar;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sessions and transfers on three in-JVM nodes: one keep-alive item keeps a thousand leases, the
 * session's expiry ends them all in one entry on every node, a leader change extends sessions as it
 * extends leases, and a transfer never leaves the name free to a racing acquisition.
 */
class SessionClusterTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private long createSession(LeasesGrpc.LeasesBlockingStub leases, String holder, long ttlSeconds) {
    var r =
        leases.createSession(
            CreateSessionRequest.newBuilder()
                .setHolder(holder)
                .setTtl(seconds(ttlSeconds))
                .build());
    assertEquals(Outcome.GRANTED, r.getOutcome(), r::toString);
    return r.getSession().getId();
  }

  private static KeepAliveResult keepAlive(LeasesGrpc.LeasesBlockingStub leases, long session) {
    return leases
        .keepAlive(KeepAliveRequest.newBuilder().addSessions(session).build())
        .getResults(0);
  }

  /** Waits until the leader's deadline for the session is at most {@code left} away. */
  private static void awaitSessionLeft(LeaseholdNode leader, long session, Duration left) {
    var scheduler = leader.diagnostics().ticker().scheduler();
    await(
        "session " + session + " within " + left + " of its deadline",
        left.plusSeconds(10),
        () ->
            scheduler.sessionRemainingNanos(session, System.nanoTime()).orElse(Long.MAX_VALUE)
                <= left.toNanos());
  }

  private static int live(LeaseholdNode node, String prefix) {
    int[] n = {0};
    node.stateMachine()
        .core()
        .forEachLease(
            (name, lease) -> {
              if (name.startsWith(prefix)) {
                n[0]++;
              }
            });
    return n[0];
  }

  @Test
  void oneKeepAliveItemKeepsAThousandLeasesAndTheirSessionsExpiryEndsThemInOneEntry()
      throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.tickInterval(Duration.ofMillis(100)));
    LeaseholdNode leader = cluster.awaitLeader();
    var leases = cluster.leases(leader.id());
    long ttlSeconds = 4;
    long session = createSession(leases, "proxy-1", ttlSeconds);
    for (int i = 0; i < 1000; i++) {
      var r =
          leases.acquire(
              AcquireRequest.newBuilder()
                  .setName("mailbox/m" + i)
                  .setHolder("proxy-1")
                  .setSession(session)
                  .build());
      assertEquals(Outcome.GRANTED, r.getOutcome(), r::toString);
      if (i % 100 == 0) {
        assertEquals(Outcome.RENEWED, keepAlive(leases, session).getOutcome());
      }
    }
    // Keep-alives over three TTLs: each is one log entry, and no lease lapses.
    long before = leader.ratis().division().getRaftLog().getLastCommittedIndex();
    int keepAlives = 0;
    long end = System.nanoTime() + Duration.ofSeconds(3 * ttlSeconds).toNanos();
    while (System.nanoTime() < end) {
      KeepAliveResult k = keepAlive(leases, session);
      assertEquals(Outcome.RENEWED, k.getOutcome());
      assertEquals(1000, k.getLeases());
      keepAlives++;
      // The next keep-alive is due when a third of the TTL has gone by the leader's clock.
      awaitSessionLeft(
          leader, session, Duration.ofSeconds(ttlSeconds).multipliedBy(2).dividedBy(3));
    }
    long entries = leader.ratis().division().getRaftLog().getLastCommittedIndex() - before;
    assertTrue(entries <= keepAlives + 2, entries + " entries for " + keepAlives + " keep-alives");
    for (LeaseholdNode n : cluster.running()) {
      assertEquals(1000, live(n, "mailbox/"), n.id() + " kept every lease");
    }

    // The client dies: no more keep-alives. Every lease ends with the session, within TTL + tick +
    // commit.
    long lastKeepAlive = System.nanoTime();
    await(
        "the session's leases ended on every node",
        Duration.ofSeconds(ttlSeconds + 10),
        () -> cluster.running().stream().allMatch(n -> live(n, "mailbox/") == 0));
    long tookMs = (System.nanoTime() - lastKeepAlive) / 1_000_000;
    assertTrue(tookMs <= ttlSeconds * 1000 + 2000, "ended after " + tookMs + " ms");
    for (LeaseholdNode n : cluster.running()) {
      Set<Long> revisions = new HashSet<>();
      int[] ended = {0};
      n.stateMachine()
          .core()
          .readHistory(
              before,
              e -> {
                if (e.getReason() == Event.Reason.REASON_SESSION_EXPIRED) {
                  ended[0]++;
                  revisions.add(e.getRevision());
                  assertEquals(session, e.getLease().getSession());
                }
              });
      assertEquals(1000, ended[0], n.id());
      assertEquals(
          1, revisions.size(), n.id() + ": every ending in one entry, got revisions " + revisions);
    }
  }

  @Test
  void aLeaderChangeExtendsSessionsLikeLeases() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.tickInterval(Duration.ofMillis(100)));
    LeaseholdNode leader = cluster.awaitLeader();
    LeaseholdNode follower = cluster.followers().get(0);
    var leases = cluster.leases(follower.id());
    long ttlSeconds = 4;
    long session = createSession(leases, "runner-1", ttlSeconds);
    assertEquals(
        Outcome.GRANTED,
        leases
            .acquire(
                AcquireRequest.newBuilder()
                    .setName("lock/a")
                    .setHolder("runner-1")
                    .setSession(session)
                    .build())
            .getOutcome());
    awaitSessionLeft(
        leader,
        session,
        Duration.ofSeconds(ttlSeconds).dividedBy(2)); // half the TTL gone, by the leader's clock
    cluster.stopNode(leader.id());
    LeaseholdNode next = cluster.awaitLeader();
    await(
        "the new leader tracks the session",
        Duration.ofSeconds(5),
        () -> next.diagnostics().ticker().scheduler().trackedSessions() == 1);
    // When the new leader's ticker took over, on its own clock (System.nanoTime, as here): the test
    // may see the new leader late on a busy machine, which would shorten the interval it measures.
    long promotedAt = next.diagnostics().ticker().scheduler().promotedAtNanos();
    await(
        "the session expired", Duration.ofSeconds(ttlSeconds + 10), () -> live(next, "lock/") == 0);
    long afterPromotionMs = (System.nanoTime() - promotedAt) / 1_000_000;
    assertTrue(
        afterPromotionMs >= ttlSeconds * 1000 - 500,
        "the new leader gave the session a full TTL, but it ended "
            + afterPromotionMs
            + " ms after the leader was ready");
  }

  @Test
  void aTransferNeverLeavesTheNameFreeToARacingAcquisition() throws Exception {
    cluster = TestCluster.start(3, dir);
    LeaseholdNode leader = cluster.awaitLeader();
    var leases = cluster.leases(leader.id());
    var racer = cluster.leases(cluster.followers().get(0).id());
    long token = leases.acquire(acquire("partition/7", "runner-a", 30)).getLease().getToken();
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger conflicts = new AtomicInteger();
    List<String> carolGot = new ArrayList<>();
    Thread carol =
        new Thread(
            () -> {
              while (!done.get()) {
                var r = racer.acquire(acquire("partition/7", "runner-c", 30));
                if (r.getOutcome() == Outcome.CONFLICT) {
                  conflicts.incrementAndGet();
                } else {
                  carolGot.add(r.toString());
                }
              }
            });
    carol.start();
    List<Long> tokens = new ArrayList<>(List.of(token));
    String holder = "runner-a";
    try {
      for (int i = 0; i < 40; i++) {
        String to = holder.equals("runner-a") ? "runner-b" : "runner-a";
        TransferResponse t =
            leases.transfer(
                TransferRequest.newBuilder()
                    .setName("partition/7")
                    .setToken(token)
                    .setToHolder(to)
                    .setTtl(seconds(30))
                    .build());
        assertEquals(Outcome.TRANSFERRED, t.getOutcome(), t::toString);
        assertTrue(t.getLease().getToken() > token, "the new token is larger");
        token = t.getLease().getToken();
        holder = to;
        tokens.add(token);
      }
    } finally {
      done.set(true);
      carol.join();
    }
    assertEquals(List.of(), carolGot, "the racing holder only ever met the lease");
    assertTrue(conflicts.get() > 0);
    // Every old token is refused from then on.
    for (long old : tokens.subList(0, tokens.size() - 1)) {
      assertEquals(
          Outcome.NOT_HELD,
          leases
              .renew(
                  RenewRequest.newBuilder()
                      .addItems(
                          io.leasehold.proto.v1.RenewItem.newBuilder()
                              .setName("partition/7")
                              .setToken(old))
                      .build())
              .getResults(0)
              .getOutcome());
      assertEquals(
          Outcome.NOT_HELD,
          leases
              .release(ReleaseRequest.newBuilder().setName("partition/7").setToken(old).build())
              .getOutcome());
    }
    for (LeaseholdNode n : cluster.running()) {
      long last = token;
      await(
          n.id() + " holds the last token",
          Duration.ofSeconds(10),
          () -> cluster.leases(n.id()).get(staleGet("partition/7")).getLease().getToken() == last);
    }
    String finalHolder = holder;
    var byHolder = leases.list(ListRequest.newBuilder().setHolder(finalHolder).build());
    assertEquals(
        List.of("partition/7"), byHolder.getLeasesList().stream().map(l -> l.getName()).toList());
  }

  @Test
  void theLeaderWithdrawsAnOfferNobodyAcceptedInTime() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.tickInterval(Duration.ofMillis(100)));
    LeaseholdNode leader = cluster.awaitLeader();
    var leases = cluster.leases(leader.id());
    long token = leases.acquire(acquire("partition/9", "runner-a", 30)).getLease().getToken();
    TransferResponse offered =
        leases.transfer(
            TransferRequest.newBuilder()
                .setName("partition/9")
                .setToken(token)
                .setToHolder("runner-b")
                .setAcceptWithin(seconds(2))
                .build());
    assertEquals(Outcome.OFFERED, offered.getOutcome());
    var scheduler = leader.diagnostics().ticker().scheduler();
    assertTrue(
        scheduler
            .remainingNanos(TimedBar.Kind.OFFER, "partition/9", System.nanoTime())
            .isPresent());
    await(
        "the leader withdrew the offer",
        Duration.ofSeconds(15),
        () ->
            scheduler
                .remainingNanos(TimedBar.Kind.OFFER, "partition/9", System.nanoTime())
                .isEmpty());
    TransferResponse late =
        leases.acceptTransfer(
            AcceptTransferRequest.newBuilder()
                .setName("partition/9")
                .setOffer(offered.getOffer())
                .setHolder("runner-b")
                .build());
    assertEquals(Outcome.NOT_HELD, late.getOutcome());
    assertEquals(
        token,
        leases.get(Requests.get("partition/9")).getLease().getToken(),
        "the lease stayed where it was");

    // An offer accepted in time moves the name, with a larger token.
    TransferResponse again =
        leases.transfer(
            TransferRequest.newBuilder()
                .setName("partition/9")
                .setToken(token)
                .setToHolder("runner-b")
                .setAcceptWithin(seconds(30))
                .build());
    TransferResponse taken =
        cluster
            .leases(cluster.followers().get(0).id())
            .acceptTransfer(
                AcceptTransferRequest.newBuilder()
                    .setName("partition/9")
                    .setOffer(again.getOffer())
                    .setHolder("runner-b")
                    .build());
    assertEquals(Outcome.TRANSFERRED, taken.getOutcome());
    assertTrue(taken.getLease().getToken() > token);
  }
}
