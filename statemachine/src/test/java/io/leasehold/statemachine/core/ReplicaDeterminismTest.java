package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.T0;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.CompactHistoryResponse;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetSessionRequest;
import io.leasehold.proto.v1.HistoryMeta;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.ListPoliciesRequest;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListSessionsRequest;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.RenewResult;
import io.leasehold.statemachine.store.InMemoryStore;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.RocksDbStore;
import io.leasehold.statemachine.store.StoreKind;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The same log gives the same state, replies and events on every replica, whatever its store:
 * random command sequences applied to an in-memory replica, a RocksDB replica and a second
 * in-memory replica must leave byte-identical snapshots. Halfway through, a fourth replica starts
 * from a snapshot of the RocksDB one and must end in the same state. The workload includes history
 * compactions and masked updates; every replica's history must equal a model built from the events
 * the entries produced, less what the compactions dropped. Operators' commands (policies, bans and
 * their lifting, revocations) are part of the log, and every replica must answer the Admin reads
 * (policies, bans, history per name and per holder) alike.
 */
class ReplicaDeterminismTest {
  private static final int STEPS = 2_000;

  @TempDir Path tempDir;

  /** Tallies of what the workload exercised, so a degenerate generator fails the test. */
  private static final class Tally {
    final Map<Outcome, Integer> outcomes = new EnumMap<>(Outcome.class);
    final Map<LogReply.ReplyCase, Integer> replies = new EnumMap<>(LogReply.ReplyCase.class);
    int renewItems;
    int manyItems;
    int manyGranted;
    int releases;
    int expired;
    int expireSkipped;
    int replays;
    int maskedUpdates;
    int compactions;
    int compactionsRemoving;
    int compactionNoops;
    int compactionsCapped;
    final Map<io.leasehold.proto.v1.RejectReason, Integer> rejections =
        new EnumMap<>(io.leasehold.proto.v1.RejectReason.class);
    int policiesSet;
    int revoked;
    int bannedEnded;
    int bansLifted;
    int lockDelaysLifted;
    int lockDelaySkipped;
    int renewRejected;
    int sessionsCreated;
    int keepAlivesRenewed;
    int sessionsClosed;
    int sessionsExpired;
    int sessionLeasesEnded;
    int transfers;
    int offered;
    int accepted;
    int withdrawn;

    void count(Outcome o) {
      outcomes.merge(o, 1, Integer::sum);
    }

    int of(Outcome o) {
      return outcomes.getOrDefault(o, 0);
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
  void replicasApplyingTheSameLogEndIdentical(long seed) throws IOException {
    List<KvStore> stores = new ArrayList<>();
    try {
      KvStore a = new InMemoryStore();
      KvStore b = RocksDbStore.open(tempDir.resolve("rocks"));
      KvStore c = new InMemoryStore();
      stores.add(a);
      stores.add(b);
      stores.add(c);
      List<LeaseCore> replicas =
          new ArrayList<>(List.of(new LeaseCore(a), new LeaseCore(b), new LeaseCore(c)));

      RandomWorkload workload = new RandomWorkload(seed);
      Tally tally = new Tally();
      long lastGrant = 0;
      List<Event> model = new ArrayList<>();
      int largestHistory = 0;
      for (int step = 1; step <= STEPS; step++) {
        RandomWorkload.Step s = workload.next();
        ApplyResult first = null;
        for (LeaseCore replica : replicas) {
          ApplyResult r = replica.apply(s.term(), s.index(), s.command());
          if (first == null) {
            first = r;
          } else {
            long i = s.index();
            assertEquals(
                first.reply(), r.reply(), () -> "reply at index " + i + " for " + s.command());
            assertEquals(first.events(), r.events(), () -> "events at index " + i);
          }
        }
        long compactBefore = workload.compactRevision();
        workload.observe(first);
        lastGrant = checkAndTally(s, first, tally, lastGrant, replicas.get(0).logFormat());
        followHistory(s, first, model, compactBefore, tally);

        if (step == STEPS / 2) {
          // A replica that joins from a snapshot of the RocksDB one (Ratis's InstallSnapshot).
          KvStore d = new InMemoryStore();
          stores.add(d);
          StoreKind.load(d, StoreKind.dump(b));
          replicas.add(new LeaseCore(d));
        }
        if (step % 500 == 0) {
          assertSameState(seed, step, stores);
          assertHistory(seed, step, replicas, workload.compactRevision(), model);
          largestHistory = Math.max(largestHistory, model.size());
        }
      }
      assertSameState(seed, STEPS, stores);
      assertSameReads(replicas);
      assertHistory(seed, STEPS, replicas, workload.compactRevision(), model);

      // The workload must have exercised the interesting paths, current tokens included.
      String summary =
          "seed "
              + seed
              + ": "
              + tally.outcomes
              + " "
              + tally.replies
              + " renewItems="
              + tally.renewItems
              + " manyItems="
              + tally.manyItems
              + " manyGranted="
              + tally.manyGranted
              + " releases="
              + tally.releases
              + " expired="
              + tally.expired
              + " expireSkipped="
              + tally.expireSkipped
              + " replays="
              + tally.replays
              + " masked="
              + tally.maskedUpdates
              + " compactions="
              + tally.compactions
              + " removing="
              + tally.compactionsRemoving
              + " noops="
              + tally.compactionNoops
              + " capped="
              + tally.compactionsCapped
              + " history="
              + model.size()
              + " largestHistory="
              + largestHistory
              + " rejections="
              + tally.rejections
              + " policiesSet="
              + tally.policiesSet
              + " revoked="
              + tally.revoked
              + " bannedEnded="
              + tally.bannedEnded
              + " bansLifted="
              + tally.bansLifted
              + " lockDelaysLifted="
              + tally.lockDelaysLifted
              + " lockDelaySkipped="
              + tally.lockDelaySkipped
              + " sessionsCreated="
              + tally.sessionsCreated
              + " keepAlivesRenewed="
              + tally.keepAlivesRenewed
              + " sessionsClosed="
              + tally.sessionsClosed
              + " sessionsExpired="
              + tally.sessionsExpired
              + " sessionLeasesEnded="
              + tally.sessionLeasesEnded
              + " transfers="
              + tally.transfers
              + " offered="
              + tally.offered
              + " accepted="
              + tally.accepted
              + " withdrawn="
              + tally.withdrawn;
      assertTrue(tally.of(Outcome.GRANTED) >= 100, summary);
      assertTrue(tally.of(Outcome.CONFLICT) >= 10, summary);
      assertTrue(tally.of(Outcome.REJECTED) >= 5, summary);
      // About half the renewals and releases use the current token (a few are never-issued, the
      // rest
      // stale, more of them since operators end leases too); some of those the policy then refuses.
      assertTrue(
          tally.of(Outcome.RENEWED) + tally.renewRejected >= 0.35 * tally.renewItems, summary);
      // (Timed bans now hold until the leader's lift, and transfers and sessions' ends also end
      // leases, so a few more releases meet ended leases.)
      assertTrue(tally.of(Outcome.RELEASED) >= 0.3 * tally.releases, summary);
      assertTrue(tally.of(Outcome.UPDATED) >= 30, summary);
      assertTrue(tally.of(Outcome.NOT_HELD) >= 50, summary);
      assertTrue(tally.expired >= 50 && tally.expireSkipped >= 50, summary);
      assertTrue(tally.replies.getOrDefault(LogReply.ReplyCase.INVALID, 0) >= 20, summary);
      assertTrue(tally.replays >= 10, summary);
      assertTrue(tally.maskedUpdates >= 25, summary);
      assertTrue(
          tally.compactionsRemoving >= 10
              && tally.compactionNoops >= 2
              && tally.compactionsCapped >= 1,
          summary);
      assertTrue(workload.compactRevision() > 0 && largestHistory >= 20, summary);
      assertTrue(tally.policiesSet >= 10 && tally.revoked >= 3 && tally.bannedEnded >= 1, summary);
      assertTrue(tally.rejections.size() >= 4, summary);
      // Lock-delays end only by the leader's lift (or never): both lifts and refused stale lifts
      // happen.
      assertTrue(tally.lockDelaysLifted >= 5 && tally.lockDelaySkipped >= 3, summary);
      // Sessions and transfers: created, kept alive, ended both ways with leases attached, and
      // handed over.
      assertTrue(tally.sessionsCreated >= 10 && tally.keepAlivesRenewed >= 5, summary);
      assertTrue(
          tally.sessionsClosed >= 3 && tally.sessionsExpired >= 3 && tally.sessionLeasesEnded >= 3,
          summary);
      assertTrue(
          tally.transfers >= 3
              && tally.rejections.getOrDefault(io.leasehold.proto.v1.RejectReason.NO_SESSION, 0)
                  >= 1,
          summary);
      assertTrue(tally.offered >= 3 && tally.accepted + tally.withdrawn >= 1, summary);
      // AcquireMany under format 5: names granted by position, and refused.
      assertTrue(tally.manyGranted >= 10 && tally.manyItems >= 3 * tally.manyGranted / 2, summary);
    } finally {
      stores.forEach(KvStore::close);
    }
  }

  private static long checkAndTally(
      RandomWorkload.Step s, ApplyResult r, Tally tally, long lastGrant, int format) {
    long grantToken = LogFormat.token(format, s.index(), 0);
    LogReply reply = r.reply();
    if (reply.getReplyCase() == LogReply.ReplyCase.REPLY_NOT_SET) {
      tally.replays++;
      assertTrue(r.events().isEmpty());
      return lastGrant;
    }
    tally.replies.merge(reply.getReplyCase(), 1, Integer::sum);
    switch (reply.getReplyCase()) {
      case ACQUIRE -> {
        AcquireResponse a = reply.getAcquire();
        tally.count(a.getOutcome());
        if (a.hasRejection()) {
          tally.rejections.merge(a.getRejection().getReason(), 1, Integer::sum);
        }
        boolean newGrant = r.events().stream().anyMatch(e -> e.type() == LeaseEvent.Type.ACQUIRED);
        if (newGrant) {
          // Fencing: a new grant's token comes from its index, above every earlier grant.
          assertEquals(grantToken, a.getLease().getToken());
          assertTrue(a.getLease().getToken() > lastGrant);
          return a.getLease().getToken();
        }
      }
      case ACQUIRE_MANY -> {
        var results = reply.getAcquireMany().getResultsList();
        java.util.Set<String> acquired = new java.util.HashSet<>();
        r.events().stream()
            .filter(e -> e.type() == LeaseEvent.Type.ACQUIRED)
            .forEach(e -> acquired.add(e.name()));
        for (int i = 0; i < results.size(); i++) {
          var item = results.get(i);
          tally.count(item.getOutcome());
          tally.manyItems++;
          if (item.hasRejection()) {
            tally.rejections.merge(item.getRejection().getReason(), 1, Integer::sum);
          }
          if (acquired.contains(item.getName())) {
            // Fencing: each new grant's token comes from its position, above every earlier grant.
            assertEquals(LogFormat.token(format, s.index(), i), item.getLease().getToken());
            assertTrue(item.getLease().getToken() > lastGrant);
            lastGrant = item.getLease().getToken();
            tally.manyGranted++;
          }
        }
      }
      case RENEW -> {
        for (RenewResult item : reply.getRenew().getResultsList()) {
          tally.renewItems++;
          tally.count(item.getOutcome());
          if (item.hasRejection()) {
            tally.renewRejected++;
            tally.rejections.merge(item.getRejection().getReason(), 1, Integer::sum);
          }
        }
      }
      case SET_POLICY -> tally.policiesSet++;
      case REVOKE -> {
        if (reply.getRevoke().getOutcome() == Outcome.REVOKED) {
          tally.revoked++;
        }
      }
      case BAN -> tally.bannedEnded += (int) reply.getBan().getBan().getLeasesEnded();
      case LIFT_BANS -> tally.bansLifted += reply.getLiftBans().getLifted();
      case LIFT_LOCK_DELAYS -> {
        tally.lockDelaysLifted += reply.getLiftLockDelays().getLifted();
        tally.lockDelaySkipped += reply.getLiftLockDelays().getSkipped();
      }
      case RELEASE -> {
        tally.releases++;
        tally.count(reply.getRelease().getOutcome());
      }
      case UPDATE -> {
        tally.count(reply.getUpdate().getOutcome());
        if (reply.getUpdate().getOutcome() == Outcome.UPDATED
            && s.command().getUpdate().getUpdateMask().getPathsCount() > 0) {
          tally.maskedUpdates++;
        }
      }
      case EXPIRE -> {
        tally.expired += reply.getExpire().getExpired();
        tally.expireSkipped += reply.getExpire().getSkipped();
        tally.sessionsExpired += reply.getExpire().getSessionsExpired();
        tally.sessionLeasesEnded += (int) reply.getExpire().getSessionLeasesEnded();
      }
      case CREATE_SESSION -> {
        if (reply.getCreateSession().getOutcome() == Outcome.GRANTED) {
          tally.sessionsCreated++;
          assertEquals(grantToken, reply.getCreateSession().getSession().getId());
        }
      }
      case KEEP_ALIVE ->
          tally.keepAlivesRenewed +=
              (int)
                  reply.getKeepAlive().getResultsList().stream()
                      .filter(k -> k.getOutcome() == Outcome.RENEWED)
                      .count();
      case CLOSE_SESSION -> {
        if (reply.getCloseSession().getOutcome() == Outcome.CLOSED) {
          tally.sessionsClosed++;
          tally.sessionLeasesEnded += (int) reply.getCloseSession().getLeasesEnded();
        }
      }
      case ACCEPT_TRANSFER -> {
        if (reply.getAcceptTransfer().getOutcome() == Outcome.TRANSFERRED) {
          tally.accepted++;
          assertEquals(grantToken, reply.getAcceptTransfer().getLease().getToken());
          assertTrue(grantToken > lastGrant);
          return grantToken;
        }
      }
      case WITHDRAW_OFFERS -> tally.withdrawn += reply.getWithdrawOffers().getWithdrawn();
      case TRANSFER -> {
        if (reply.getTransfer().getOutcome() == Outcome.OFFERED) {
          tally.offered++;
        }
        tally.count(reply.getTransfer().getOutcome());
        if (reply.getTransfer().hasRejection()) {
          tally.rejections.merge(reply.getTransfer().getRejection().getReason(), 1, Integer::sum);
        }
        if (reply.getTransfer().getOutcome() == Outcome.TRANSFERRED) {
          tally.transfers++;
          // Fencing: the new holder's token is larger than every earlier grant, the old one's
          // included.
          assertEquals(grantToken, reply.getTransfer().getLease().getToken());
          assertTrue(grantToken > lastGrant);
          return grantToken;
        }
      }
      default -> {}
    }
    return lastGrant;
  }

  /**
   * Extends the model of the history by what the entry produced (every change but renewals, in
   * order) and, for a compaction, checks its reply against the model and drops what it dropped.
   */
  private static void followHistory(
      RandomWorkload.Step s, ApplyResult r, List<Event> model, long compactBefore, Tally tally) {
    for (LeaseEvent e : r.events()) {
      if (e.type() != LeaseEvent.Type.RENEWED) {
        model.add(Events.toApi(e));
      }
    }
    if (!r.reply().hasCompactHistory()) {
      return;
    }
    CompactHistoryResponse c = r.reply().getCompactHistory();
    long requested = s.command().getCompactHistory().getBelowRevision();
    long expected = Math.max(compactBefore, Math.min(requested, s.index()));
    assertEquals(
        expected,
        c.getCompactRevision(),
        () -> "compact revision at " + s.index() + " for below " + requested);
    int sizeBefore = model.size();
    model.removeIf(e -> e.getRevision() < c.getCompactRevision());
    assertEquals(sizeBefore - model.size(), c.getRemoved(), () -> "removed at " + s.index());
    assertEquals(s.index(), c.getRevision());
    tally.compactions++;
    if (c.getRemoved() > 0) {
      tally.compactionsRemoving++;
    }
    if (c.getCompactRevision() == compactBefore) {
      tally.compactionNoops++;
    } else if (c.getCompactRevision() == s.index()) {
      tally.compactionsCapped++;
    }
  }

  /**
   * Every replica reads the modelled history from its compact revision, and nothing from below it.
   */
  private static void assertHistory(
      long seed, int step, List<LeaseCore> replicas, long compactRevision, List<Event> model) {
    for (int i = 0; i < replicas.size(); i++) {
      LeaseCore replica = replicas.get(i);
      String where = "seed " + seed + " step " + step + " replica " + i;
      assertEquals(
          HistoryMeta.newBuilder()
              .setCompactRevision(compactRevision)
              .setCount(model.size())
              .build(),
          replica.history(),
          where);
      List<Event> events = new ArrayList<>();
      LeaseCore.HistoryRead read = replica.readHistory(compactRevision, events::add);
      assertFalse(read.compacted(), where);
      assertEquals(replica.applied().index(), read.revision(), where);
      assertEquals(model, events, where);
      if (compactRevision > 0) {
        assertTrue(
            replica
                .readHistory(
                    compactRevision - 1,
                    e -> {
                      throw new AssertionError(where + ": visited " + e);
                    })
                .compacted(),
            where);
      }
    }
  }

  static void assertSameState(long seed, int step, List<KvStore> stores) {
    byte[] reference = StoreKind.dump(stores.get(0));
    for (int i = 1; i < stores.size(); i++) {
      assertArrayEquals(
          reference,
          StoreKind.dump(stores.get(i)),
          "seed "
              + seed
              + " step "
              + step
              + ": snapshot of replica "
              + i
              + " differs from replica 0");
      assertEquals(stores.get(0).applied(), stores.get(i).applied());
    }
  }

  static void assertSameReads(List<LeaseCore> replicas) {
    LeaseCore reference = replicas.get(0);
    long now = T0 + 3_600_000_000L;
    for (LeaseCore replica : replicas.subList(1, replicas.size())) {
      assertEquals(
          reference.list(ListRequest.getDefaultInstance(), now),
          replica.list(ListRequest.getDefaultInstance(), now));
      for (String name : RandomWorkload.NAMES) {
        GetRequest g = GetRequest.newBuilder().setName(name).build();
        assertEquals(reference.get(g, now), replica.get(g, now));
      }
      List<ReadQuery> admin = new ArrayList<>();
      admin.add(
          ReadQuery.newBuilder().setListPolicies(ListPoliciesRequest.getDefaultInstance()).build());
      admin.add(ReadQuery.newBuilder().setListBans(ListBansRequest.getDefaultInstance()).build());
      for (String namespace : RandomWorkload.NAMESPACES) {
        admin.add(
            ReadQuery.newBuilder()
                .setGetPolicy(GetPolicyRequest.newBuilder().setNamespace(namespace))
                .build());
      }
      for (String name : RandomWorkload.NAMES) {
        admin.add(
            ReadQuery.newBuilder().setHistory(HistoryRequest.newBuilder().setName(name)).build());
      }
      for (String holder : RandomWorkload.HOLDERS) {
        admin.add(
            ReadQuery.newBuilder()
                .setHistory(HistoryRequest.newBuilder().setHolder(holder))
                .build());
        admin.add(
            ReadQuery.newBuilder().setList(ListRequest.newBuilder().setHolder(holder)).build());
        admin.add(
            ReadQuery.newBuilder()
                .setListSessions(ListSessionsRequest.newBuilder().setHolder(holder))
                .build());
      }
      reference.forEachSession(
          (id, session) ->
              admin.add(
                  ReadQuery.newBuilder()
                      .setGetSession(GetSessionRequest.newBuilder().setSession(id))
                      .build()));
      for (ReadQuery q : admin) {
        assertEquals(reference.query(q, now), replica.query(q, now), () -> "admin read " + q);
      }
    }
  }
}
