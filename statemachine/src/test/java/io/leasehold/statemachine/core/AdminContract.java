package io.leasehold.statemachine.core;

import static io.leasehold.statemachine.core.Cmds.SECOND;
import static io.leasehold.statemachine.core.Cmds.T0;
import static io.leasehold.statemachine.core.Cmds.acquire;
import static io.leasehold.statemachine.core.Cmds.at;
import static io.leasehold.statemachine.core.Cmds.ban;
import static io.leasehold.statemachine.core.Cmds.banFor;
import static io.leasehold.statemachine.core.Cmds.expire;
import static io.leasehold.statemachine.core.Cmds.item;
import static io.leasehold.statemachine.core.Cmds.liftBan;
import static io.leasehold.statemachine.core.Cmds.liftLockDelay;
import static io.leasehold.statemachine.core.Cmds.policy;
import static io.leasehold.statemachine.core.Cmds.release;
import static io.leasehold.statemachine.core.Cmds.renew;
import static io.leasehold.statemachine.core.Cmds.revoke;
import static io.leasehold.statemachine.core.Cmds.secs;
import static io.leasehold.statemachine.core.Cmds.setPolicy;
import static io.leasehold.statemachine.core.Cmds.unban;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.BanResponse;
import io.leasehold.proto.v1.EndedLease;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.LeaseState;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.proto.v1.Rejection;
import io.leasehold.proto.v1.RevokeResponse;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreKind;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Operators' commands and what they leave behind, on every store: bans (and their lifting),
 * revocation, every ending reason in the per-name and per-holder history, lock-delay, the states
 * operators see, and the counters.
 */
public abstract class AdminContract extends CoreFixture {

  // ---- bans ----

  @Test
  void aBanEndsEveryLeaseOfTheHolderInOneEntryWithABannedEventForEach() throws IOException {
    long index = 0;
    for (int i = 0; i < 1000; i++) {
      granted(apply(++index, T0, acquire("lock/job-" + i, "alice", secs(60))));
    }
    granted(apply(++index, T0, acquire("lock/other", "bob", secs(60))));
    long banAt = ++index;

    ApplyResult r = apply(banAt, T0 + SECOND, ban("alice", "runaway"));
    BanResponse b = r.reply().getBan();
    assertEquals(1000, b.getBan().getLeasesEnded());
    assertEquals("runaway", b.getBan().getReason());
    assertEquals(banAt, b.getRevision());
    assertEquals(1000, r.events().size(), "one event per lease, all in this one entry");
    for (LeaseEvent e : r.events()) {
      assertEquals(LeaseEvent.Type.BANNED, e.type());
      assertEquals(banAt, e.revision());
      Event api = Events.toApi(e);
      assertEquals(Event.Type.REVOKED, api.getType());
      assertEquals(Event.Reason.REASON_BANNED, api.getReason());
      assertEquals("runaway", api.getMessage());
    }
    // In grant order, found through the holder index.
    assertEquals("lock/job-0", r.events().get(0).name());
    assertEquals("lock/job-999", r.events().get(999).name());
    assertEquals(List.of("lock/other"), List.copyOf(leases().keySet()));
    assertEquals(1000, storedAt(banAt).size(), "every ending is in the event history");
    assertEquals(Event.Reason.REASON_BANNED, historyOf("lock/job-7").get(0).getReason());
    assertEquals(100, historyOfHolder("alice").size(), "the holder's history keeps its last 100");
    assertEquals("lock/job-999", historyOfHolder("alice").get(0).getName());
    assertEquals(1000, core.counters().snapshot().banned());
  }

  @Test
  void aBannedHolderCannotAcquireUntilUnbanned() throws IOException {
    apply(1, T0, ban("alice", "abuse"));
    Rejection r = rejected(apply(2, T0, acquire("lock/a", "alice")));
    assertEquals(RejectReason.BANNED, r.getReason());
    assertFalse(r.hasRetryAfter(), "a ban without an end");
    assertTrue(r.getMessage().contains("abuse"), r::getMessage);
    granted(apply(3, T0, acquire("lock/a", "bob")));
    assertTrue(apply(4, T0, unban("alice")).reply().getUnban().getWasBanned());
    assertFalse(apply(5, T0, unban("alice")).reply().getUnban().getWasBanned());
    granted(apply(6, T0, acquire("lock/b", "alice")));
  }

  @Test
  void aRenewalByAHolderBannedSinceItsLastRenewalIsNotHeldBecauseItsLeasesEnded()
      throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(30))));
    apply(2, T0, ban("alice", ""));
    assertEquals(
        Outcome.NOT_HELD,
        apply(3, T0 + SECOND, renew("lock/a", 1)).reply().getRenew().getResults(0).getOutcome());
  }

  @Test
  void aTimedBanHoldsPastItsEndUntilTheLeaderLiftsIt() throws IOException {
    ApplyResult banned = apply(1, T0, banFor("alice", secs(10)));
    assertEquals(at(T0 + 10 * SECOND), banned.reply().getBan().getBan().getUntil());
    assertEquals(
        List.of(TimedBar.set(TimedBar.Kind.BAN, "alice", 1, 10 * SECOND)),
        banned.bars(),
        "the leader learns of it");
    Rejection r = rejected(apply(2, T0 + 4 * SECOND, acquire("lock/a", "alice")));
    assertEquals(RejectReason.BANNED, r.getReason());
    assertEquals(secs(6), r.getRetryAfter(), "an estimate from stamped times");

    // Past its end by stamped time the ban still holds: only the leader decides it is over.
    Rejection late = rejected(apply(3, T0 + 11 * SECOND, acquire("lock/a", "alice")));
    assertEquals(RejectReason.BANNED, late.getReason());
    assertEquals(secs(0), late.getRetryAfter(), "floored at 0");
    assertTrue(late.getMessage().contains("when the leader lifts it"), late.getMessage());
    // Another ban than the leader saw: skipped.
    assertEquals(
        0, apply(4, T0 + 11 * SECOND, liftBan("alice", 2)).reply().getLiftBans().getLifted());
    assertEquals(1, bans().size());
    // The lift applies whatever its stamped time says: the leader decided on its monotonic clock.
    ApplyResult lifted = apply(5, T0 + 5 * SECOND, liftBan("alice", 1));
    assertEquals(1, lifted.reply().getLiftBans().getLifted());
    assertEquals(List.of(TimedBar.removed(TimedBar.Kind.BAN, "alice")), lifted.bars());
    assertEquals(0, bans().size());
    granted(apply(6, T0 + 12 * SECOND, acquire("lock/a", "alice")));
  }

  @Test
  void aStampedTimeFarInTheFutureLiftsNeitherABanNorALockDelay() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(10))));
    apply(2, T0, banFor("alice", secs(10)));
    granted(apply(3, T0, acquire("lock/a", "carol", secs(5))));
    apply(4, T0 + 6 * SECOND, expire("lock/a", 3, 3));
    long farFuture = T0 + 10L * 365 * 24 * 3600 * SECOND;
    assertEquals(
        RejectReason.BANNED, rejected(apply(5, farFuture, acquire("lock/b", "alice"))).getReason());
    Rejection r = rejected(apply(6, farFuture, acquire("lock/a", "bob")));
    assertEquals(RejectReason.LOCK_DELAY, r.getReason());
    assertEquals(secs(0), r.getRetryAfter());
    assertTrue(
        r.getMessage().contains("the lock-delay ends when the leader lifts it"), r.getMessage());
    assertEquals(1, count(Space.LOCK_DELAYS), "nothing drops a bar by stamped time");
    assertEquals(1, bans().size());
    // Reloaded (a restart, a snapshot), still barred.
    core = new LeaseCore(store);
    assertEquals(
        RejectReason.LOCK_DELAY,
        rejected(apply(7, farFuture + SECOND, acquire("lock/a", "bob"))).getReason());
    assertEquals(
        RejectReason.BANNED,
        rejected(apply(8, farFuture + SECOND, acquire("lock/b", "alice"))).getReason());
  }

  @Test
  void aNewBanReplacesTheOldOneSoTheLeaderCannotLiftItWithTheOldRevision() throws IOException {
    apply(1, T0, banFor("alice", secs(5)));
    apply(2, T0 + SECOND, ban("alice", "for good"));
    assertEquals(
        0, apply(3, T0 + 6 * SECOND, liftBan("alice", 1)).reply().getLiftBans().getLifted());
    assertEquals(
        RejectReason.BANNED,
        rejected(apply(4, T0 + 7 * SECOND, acquire("lock/a", "alice"))).getReason());
    assertEquals("for good", bans().get(0).getReason());
  }

  @Test
  void aBanWhoseEndHasPassedIsInvalid() throws IOException {
    var request =
        io.leasehold.proto.v1.BanRequest.newBuilder().setHolder("alice").setUntil(at(T0 - SECOND));
    io.leasehold.proto.v1.InvalidCommand invalid =
        invalid(apply(1, T0, io.leasehold.proto.v1.LogCommand.newBuilder().setBan(request)));
    assertEquals("until", invalid.getField());
    assertEquals(0, bans().size());
  }

  // ---- revoke ----

  @Test
  void revokeEndsALeaseWhoeverHoldsIt() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(30))));
    assertEquals(
        Outcome.REVOKED,
        apply(2, T0, revoke("lock/a", 1, "by token")).reply().getRevoke().getOutcome());
    granted(apply(3, T0, acquire("lock/a", "bob", secs(30))));
    assertEquals(
        Outcome.NOT_HELD,
        apply(4, T0, revoke("lock/a", 1, "stale")).reply().getRevoke().getOutcome(),
        "a token given must be the current lease's");
    assertEquals(
        Outcome.NOT_HELD,
        apply(5, T0, revoke("lock/none", "nothing there")).reply().getRevoke().getOutcome());

    ApplyResult r = apply(6, T0 + SECOND, revoke("lock/a", "stuck job"));
    RevokeResponse rr = r.reply().getRevoke();
    assertEquals(Outcome.REVOKED, rr.getOutcome());
    assertEquals("bob", rr.getLease().getHolder());
    assertEquals(3, rr.getLease().getToken());
    assertEquals(List.of("REVOKED@6:lock/a"), describe(r.events()));
    Event e = Events.toApi(r.events().get(0));
    assertEquals(Event.Type.REVOKED, e.getType());
    assertEquals(Event.Reason.REASON_REVOKED, e.getReason());
    assertEquals("stuck job", e.getMessage());
    assertEquals(e, history(6).get(0), "kept in the event history with its reason and message");
    assertTrue(leases().isEmpty());
  }

  // ---- history ----

  @Test
  void everyEndingIsRecordedPerNameAndPerHolderWithItsReason() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(10))));
    apply(2, T0 + SECOND, renew("lock/a", 1));
    apply(3, T0 + 2 * SECOND, release("lock/a", 1));
    granted(apply(4, T0 + 3 * SECOND, acquire("lock/a", "alice", secs(10))));
    apply(5, T0 + 20 * SECOND, expire("lock/a", 4, 4));
    granted(apply(6, T0 + 21 * SECOND, acquire("lock/a", "bob", secs(10))));
    apply(7, T0 + 22 * SECOND, revoke("lock/a", "maintenance"));
    granted(apply(8, T0 + 23 * SECOND, acquire("lock/a", "alice", secs(10))));
    apply(9, T0 + 24 * SECOND, ban("alice", "compromised"));

    List<EndedLease> byName = historyOf("lock/a");
    assertEquals(
        List.of(
            Event.Reason.REASON_BANNED,
            Event.Reason.REASON_REVOKED,
            Event.Reason.REASON_EXPIRED,
            Event.Reason.REASON_RELEASED),
        byName.stream().map(EndedLease::getReason).toList(),
        "newest first");
    EndedLease released = byName.get(3);
    assertEquals(
        EndedLease.newBuilder()
            .setName("lock/a")
            .setHolder("alice")
            .setToken(1)
            .setTtl(secs(10))
            .setAcquiredAt(at(T0))
            .setEndedAt(at(T0 + 2 * SECOND))
            .setRenewCount(1)
            .setReason(Event.Reason.REASON_RELEASED)
            .setRevision(3)
            .build(),
        released);
    assertEquals("maintenance", byName.get(1).getMessage());
    assertEquals("compromised", byName.get(0).getMessage());
    assertEquals(
        List.of(8L, 4L, 1L), historyOfHolder("alice").stream().map(EndedLease::getToken).toList());
    assertEquals(List.of(6L), historyOfHolder("bob").stream().map(EndedLease::getToken).toList());
    assertEquals(
        List.of(),
        historyOf("lock/ab"),
        "another name's history is its own, even under a longer name");
    var limited =
        query(
            ReadQuery.newBuilder()
                .setHistory(
                    io.leasehold.proto.v1.HistoryRequest.newBuilder()
                        .setName("lock/a")
                        .setLimit(2)),
            0);
    assertEquals(2, limited.getHistory().getLeasesCount());
    assertEquals(9, limited.getHistory().getRevision());
  }

  @Test
  void theHistoryKeepsTheLastRecordsPerNameThatThePolicyAllows() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setHistoryLimit(3)));
    long index = 1;
    List<Long> tokens = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      long token = granted(apply(++index, T0, acquire("lock/a", "h" + i))).getLease().getToken();
      tokens.add(token);
      apply(++index, T0, release("lock/a", token));
    }
    assertEquals(
        List.of(tokens.get(4), tokens.get(3), tokens.get(2)),
        historyOf("lock/a").stream().map(EndedLease::getToken).toList());
    assertEquals(
        3, count(Space.NAME_HISTORY), "the older records are gone from the store, not only hidden");
    // Lowering the limit drops the excess at the next ending; the reloaded core carries on where
    // the store is.
    apply(++index, T0, setPolicy("lock", policy().setHistoryLimit(1)));
    core = new LeaseCore(store);
    long token = granted(apply(++index, T0, acquire("lock/a", "x"))).getLease().getToken();
    apply(++index, T0, release("lock/a", token));
    assertEquals(List.of(token), historyOf("lock/a").stream().map(EndedLease::getToken).toList());
    assertEquals(1, count(Space.NAME_HISTORY));
  }

  // ---- lock-delay ----

  @Test
  void afterAnExpiryTheNameIsRefusedUntilTheLeaderLiftsTheLockDelay() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(10))));
    granted(apply(2, T0, acquire("lock/a", "alice", secs(5))));
    ApplyResult expired = apply(3, T0 + 20 * SECOND, expire("lock/a", 2, 2));
    assertEquals(
        List.of(TimedBar.set(TimedBar.Kind.LOCK_DELAY, "lock/a", 3, 10 * SECOND)),
        expired.bars(),
        "the leader learns of the bar and its delay");
    Rejection r = rejected(apply(4, T0 + 25 * SECOND, acquire("lock/a", "bob")));
    assertEquals(RejectReason.LOCK_DELAY, r.getReason());
    assertEquals(secs(5), r.getRetryAfter(), "an estimate from stamped times");
    assertEquals(
        RejectReason.LOCK_DELAY,
        rejected(apply(5, T0 + 29 * SECOND, acquire("lock/a", "alice"))).getReason(),
        "the former holder too");
    // Past the estimate, still barred: the delay ends when the leader lifts it.
    Rejection late = rejected(apply(6, T0 + 31 * SECOND, acquire("lock/a", "bob")));
    assertEquals(RejectReason.LOCK_DELAY, late.getReason());
    assertEquals(secs(0), late.getRetryAfter());
    assertTrue(
        late.getMessage().contains("the lock-delay ends when the leader lifts it"),
        late.getMessage());
    // A lift for another ending than the one that set the bar changes nothing.
    assertEquals(
        0,
        apply(7, T0 + 31 * SECOND, liftLockDelay("lock/a", 2))
            .reply()
            .getLiftLockDelays()
            .getLifted());
    assertEquals(
        0,
        apply(8, T0 + 31 * SECOND, liftLockDelay("lock/other", 3))
            .reply()
            .getLiftLockDelays()
            .getLifted());
    ApplyResult lifted = apply(9, T0 + 31 * SECOND, liftLockDelay("lock/a", 3));
    assertEquals(1, lifted.reply().getLiftLockDelays().getLifted());
    assertEquals(List.of(TimedBar.removed(TimedBar.Kind.LOCK_DELAY, "lock/a")), lifted.bars());
    assertEquals(0, count(Space.LOCK_DELAYS));
    granted(apply(10, T0 + 31 * SECOND, acquire("lock/a", "bob")));
    granted(apply(11, T0 + 31 * SECOND, acquire("lock/b", "bob")));
  }

  @Test
  void aLateLiftDoesNotLiftANewerBarOnTheSameName() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(10))));
    granted(apply(2, T0, acquire("lock/a", "alice")));
    apply(3, T0, revoke("lock/a", ""));
    apply(4, T0, liftLockDelay("lock/a", 3));
    granted(apply(5, T0, acquire("lock/a", "bob")));
    apply(6, T0, revoke("lock/a", ""));
    assertEquals(
        0,
        apply(7, T0, liftLockDelay("lock/a", 3)).reply().getLiftLockDelays().getLifted(),
        "a deposed leader's repeat of the old lift");
    assertEquals(
        RejectReason.LOCK_DELAY,
        rejected(apply(8, T0 + 60 * SECOND, acquire("lock/a", "carol"))).getReason());
  }

  @Test
  void aNewLeaderReadsEveryBarWithItsFullDelayAndEveryTimedBanWithWhatRemains() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(10))));
    granted(apply(2, T0, acquire("lock/a", "alice")));
    apply(3, T0 + SECOND, revoke("lock/a", ""));
    apply(4, T0 + 2 * SECOND, banFor("bob", secs(30)));
    apply(5, T0 + 2 * SECOND, ban("carol", "for good"));
    apply(6, T0 + 7 * SECOND, acquire("svc/x", "dave"));
    List<TimedBar> bars = new ArrayList<>();
    assertEquals(6, core.forEachTimedBar(bars::add));
    assertEquals(
        List.of(
            TimedBar.set(TimedBar.Kind.LOCK_DELAY, "lock/a", 3, 10 * SECOND),
            TimedBar.set(TimedBar.Kind.BAN, "bob", 4, 25 * SECOND)),
        bars,
        "a ban without end is not the leader's to lift");
  }

  @Test
  void lockDelayFollowsRevocationAndBanButNotARelease() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(10))));
    granted(apply(2, T0, acquire("lock/released", "alice")));
    granted(apply(3, T0, acquire("lock/revoked", "alice")));
    granted(apply(4, T0, acquire("lock/banned", "carol")));
    apply(5, T0, release("lock/released", 2));
    apply(6, T0, revoke("lock/revoked", ""));
    apply(7, T0, ban("carol", ""));
    granted(apply(8, T0 + SECOND, acquire("lock/released", "bob")));
    assertEquals(
        RejectReason.LOCK_DELAY,
        rejected(apply(9, T0 + SECOND, acquire("lock/revoked", "bob"))).getReason());
    assertEquals(
        RejectReason.LOCK_DELAY,
        rejected(apply(10, T0 + SECOND, acquire("lock/banned", "bob"))).getReason());
  }

  @Test
  void lockDelayIsReplicatedStateThatSurvivesAReloadAndASnapshot() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(10))));
    granted(apply(2, T0, acquire("lock/a", "alice")));
    apply(3, T0 + SECOND, revoke("lock/a", ""));
    byte[] snapshot = StoreKind.dump(store);

    core = new LeaseCore(store);
    assertEquals(
        secs(8), rejected(apply(4, T0 + 3 * SECOND, acquire("lock/a", "bob"))).getRetryAfter());
    List<TimedBar> bars = new ArrayList<>();
    core.forEachTimedBar(bars::add);
    assertEquals(List.of(TimedBar.set(TimedBar.Kind.LOCK_DELAY, "lock/a", 3, 10 * SECOND)), bars);
    for (StoreKind kind : StoreKind.values()) {
      try (KvStore other = kind.open(tempDir.resolve("other-" + kind))) {
        StoreKind.load(other, snapshot);
        LeaseCore restored = new LeaseCore(other);
        ApplyResult r =
            restored.apply(
                TERM, 4, acquire("lock/a", "bob").setLeaderTimeMicros(T0 + 3 * SECOND).build());
        assertEquals(
            RejectReason.LOCK_DELAY,
            r.reply().getAcquire().getRejection().getReason(),
            kind.toString());
      }
    }
  }

  @Test
  void aRevokedNameWaitsForTheLiftNotForLaterEntries() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(5))));
    long index = 1;
    for (int i = 0; i < 3; i++) {
      granted(apply(++index, T0, acquire("lock/n" + i, "alice")));
      apply(++index, T0, revoke("lock/n" + i, ""));
    }
    assertEquals(3, count(Space.LOCK_DELAYS));
    apply(++index, T0 + 6 * SECOND, acquire("svc/unrelated", "bob"));
    assertEquals(3, count(Space.LOCK_DELAYS), "later entries drop nothing: the leader lifts bars");
    var lift = io.leasehold.proto.v1.LiftLockDelays.newBuilder();
    for (int i = 0; i < 3; i++) {
      lift.addItems(
          io.leasehold.proto.v1.LiftLockDelayItem.newBuilder()
              .setName("lock/n" + i)
              .setRevision(3 + 2L * i));
    }
    assertEquals(
        3,
        apply(
                ++index,
                T0 + 6 * SECOND,
                io.leasehold.proto.v1.LogCommand.newBuilder().setLiftLockDelays(lift))
            .reply()
            .getLiftLockDelays()
            .getLifted());
    assertEquals(0, count(Space.LOCK_DELAYS));
  }

  // ---- states ----

  @Test
  void getAndListShowAnActiveLeaseAsStaleOnceItsLastRenewalIsOlderThanTwoHeartbeats()
      throws IOException {
    apply(1, T0, setPolicy("lock", policy().setHeartbeatInterval(secs(1))));
    granted(apply(2, T0, acquire("lock/a", "alice", secs(30))));
    granted(apply(3, T0, acquire("svc/b", "alice", secs(30))));
    assertEquals(LeaseState.ACTIVE, get("lock/a", T0 + 2 * SECOND).getLease().getState());
    assertEquals(LeaseState.STALE, get("lock/a", T0 + 2 * SECOND + 1).getLease().getState());
    Map<String, LeaseState> listed =
        list("", 0, "", T0 + 3 * SECOND).getLeasesList().stream()
            .collect(Collectors.toMap(l -> l.getName(), l -> l.getState()));
    assertEquals(
        Map.of("lock/a", LeaseState.STALE, "svc/b", LeaseState.ACTIVE),
        listed,
        "svc/b's heartbeat is 10 s");
    apply(4, T0 + 3 * SECOND, renew("lock/a", 2));
    var lease = get("lock/a", T0 + 4 * SECOND).getLease();
    assertEquals(LeaseState.ACTIVE, lease.getState());
    assertEquals(at(T0 + 3 * SECOND), lease.getRenewedAt());
    assertEquals(1, lease.getRenewCount());
    assertEquals(at(T0 + 33 * SECOND), lease.getExpiresAt());
    assertEquals(secs(29), lease.getRemaining());
  }

  // ---- counters ----

  @Test
  void countersCountOutcomesRejectionsAndLateHeartbeats() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setMaxTtl(secs(60))));
    granted(apply(2, T0, acquire("lock/a", "alice", secs(10))));
    granted(apply(3, T0, acquire("lock/b", "alice", secs(10))));
    granted(apply(4, T0, acquire("lock/c", "bob", secs(10))));
    apply(5, T0 + SECOND, renew(item("lock/a", 2), item("lock/b", 3)));
    apply(6, T0 + 30 * SECOND, expire("lock/a", 2, 5));
    apply(7, T0 + 31 * SECOND, renew("lock/a", 2));
    apply(8, T0 + 31 * SECOND, renew("lock/b", 2));
    apply(9, T0 + 31 * SECOND, release("lock/b", 3));
    apply(10, T0 + 31 * SECOND, revoke("lock/c", ""));
    rejected(apply(11, T0 + 31 * SECOND, acquire("lock/d", "carol", secs(61))));
    apply(12, T0 + 31 * SECOND, ban("carol", ""));
    rejected(apply(13, T0 + 31 * SECOND, acquire("lock/d", "carol")));

    Counters.Snapshot c = core.counters().snapshot();
    assertEquals(3, c.acquired());
    assertEquals(2, c.renewed());
    assertEquals(1, c.released());
    assertEquals(1, c.expired());
    assertEquals(1, c.revoked());
    assertEquals(0, c.banned());
    assertEquals(
        1,
        c.lateHeartbeats(),
        "lock/a's renewal came after it expired; lock/b's had a wrong token");
    assertEquals(1, c.rejected(RejectReason.TTL_OUT_OF_RANGE));
    assertEquals(1, c.rejected(RejectReason.BANNED));
    assertEquals(0, c.rejected(RejectReason.LOCK_DELAY));
  }

  // ---- helpers ----

  private List<io.leasehold.proto.v1.Ban> bans() {
    return query(ReadQuery.newBuilder().setListBans(ListBansRequest.getDefaultInstance()), 0)
        .getListBans()
        .getBansList();
  }

  private int count(Space space) {
    return store.read(
        view -> {
          int[] n = {0};
          view.scan(
              space,
              new byte[0],
              new byte[0],
              (k, v) -> {
                n[0]++;
                return true;
              });
          return n[0];
        });
  }
}
