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
import io.leasehold.proto.v1.LiftBanItem;
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
 * revocation, every ending reason in the per-name and per-holder history, lock-delay, the
 * states operators see, and the counters.
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
  void aRenewalByAHolderBannedSinceItsLastRenewalIsNotHeldBecauseItsLeasesEnded() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(30))));
    apply(2, T0, ban("alice", ""));
    assertEquals(Outcome.NOT_HELD, apply(3, T0 + SECOND, renew("lock/a", 1)).reply().getRenew().getResults(0).getOutcome());
  }

  @Test
  void aTimedBanStopsCountingAtItsEndAndTheLeaderLiftsItOnlyWhenDue() throws IOException {
    ApplyResult banned = apply(1, T0, banFor("alice", secs(10)));
    assertEquals(at(T0 + 10 * SECOND), banned.reply().getBan().getBan().getUntil());
    Rejection r = rejected(apply(2, T0 + 4 * SECOND, acquire("lock/a", "alice")));
    assertEquals(RejectReason.BANNED, r.getReason());
    assertEquals(secs(6), r.getRetryAfter());

    assertEquals(List.of(), core.dueBans(T0 + 9 * SECOND, 10));
    assertEquals(List.of(LiftBanItem.newBuilder().setHolder("alice").setRevision(1).build()), core.dueBans(T0 + 10 * SECOND, 10));
    // Too early by the entry's stamped time, or another ban than the leader saw: skipped.
    assertEquals(0, apply(3, T0 + 9 * SECOND, liftBan("alice", 1)).reply().getLiftBans().getLifted());
    assertEquals(0, apply(4, T0 + 11 * SECOND, liftBan("alice", 2)).reply().getLiftBans().getLifted());
    // Past its end a ban no longer counts, even before it is lifted.
    granted(apply(5, T0 + 11 * SECOND, acquire("lock/a", "alice")));
    assertEquals(1, bans().size());
    assertEquals(1, apply(6, T0 + 12 * SECOND, liftBan("alice", 1)).reply().getLiftBans().getLifted());
    assertEquals(0, bans().size());
    assertEquals(List.of(), core.dueBans(T0 + 20 * SECOND, 10));
  }

  @Test
  void aNewBanReplacesTheOldOneSoTheLeaderCannotLiftItWithTheOldRevision() throws IOException {
    apply(1, T0, banFor("alice", secs(5)));
    apply(2, T0 + SECOND, ban("alice", "for good"));
    assertEquals(0, apply(3, T0 + 6 * SECOND, liftBan("alice", 1)).reply().getLiftBans().getLifted());
    assertEquals(RejectReason.BANNED, rejected(apply(4, T0 + 7 * SECOND, acquire("lock/a", "alice"))).getReason());
    assertEquals("for good", bans().get(0).getReason());
  }

  @Test
  void aBanWhoseEndHasPassedIsInvalid() throws IOException {
    var request = io.leasehold.proto.v1.BanRequest.newBuilder().setHolder("alice").setUntil(at(T0 - SECOND));
    io.leasehold.proto.v1.InvalidCommand invalid = invalid(apply(1, T0, io.leasehold.proto.v1.LogCommand.newBuilder().setBan(request)));
    assertEquals("until", invalid.getField());
    assertEquals(0, bans().size());
  }

  // ---- revoke ----

  @Test
  void revokeEndsALeaseWhoeverHoldsIt() throws IOException {
    granted(apply(1, T0, acquire("lock/a", "alice", secs(30))));
    assertEquals(Outcome.REVOKED, apply(2, T0, revoke("lock/a", 1, "by token")).reply().getRevoke().getOutcome());
    granted(apply(3, T0, acquire("lock/a", "bob", secs(30))));
    assertEquals(Outcome.NOT_HELD, apply(4, T0, revoke("lock/a", 1, "stale")).reply().getRevoke().getOutcome(),
        "a token given must be the current lease's");
    assertEquals(Outcome.NOT_HELD, apply(5, T0, revoke("lock/none", "nothing there")).reply().getRevoke().getOutcome());

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
    assertEquals(List.of(Event.Reason.REASON_BANNED, Event.Reason.REASON_REVOKED, Event.Reason.REASON_EXPIRED, Event.Reason.REASON_RELEASED),
        byName.stream().map(EndedLease::getReason).toList(), "newest first");
    EndedLease released = byName.get(3);
    assertEquals(EndedLease.newBuilder()
        .setName("lock/a").setHolder("alice").setToken(1).setTtl(secs(10))
        .setAcquiredAt(at(T0)).setEndedAt(at(T0 + 2 * SECOND)).setRenewCount(1)
        .setReason(Event.Reason.REASON_RELEASED).setRevision(3).build(), released);
    assertEquals("maintenance", byName.get(1).getMessage());
    assertEquals("compromised", byName.get(0).getMessage());
    assertEquals(List.of(8L, 4L, 1L), historyOfHolder("alice").stream().map(EndedLease::getToken).toList());
    assertEquals(List.of(6L), historyOfHolder("bob").stream().map(EndedLease::getToken).toList());
    assertEquals(List.of(), historyOf("lock/ab"), "another name's history is its own, even under a longer name");
    var limited = query(ReadQuery.newBuilder().setHistory(io.leasehold.proto.v1.HistoryRequest.newBuilder().setName("lock/a").setLimit(2)), 0);
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
    assertEquals(List.of(tokens.get(4), tokens.get(3), tokens.get(2)), historyOf("lock/a").stream().map(EndedLease::getToken).toList());
    assertEquals(3, count(Space.NAME_HISTORY), "the older records are gone from the store, not only hidden");
    // Lowering the limit drops the excess at the next ending; the reloaded core carries on where the store is.
    apply(++index, T0, setPolicy("lock", policy().setHistoryLimit(1)));
    core = new LeaseCore(store);
    long token = granted(apply(++index, T0, acquire("lock/a", "x"))).getLease().getToken();
    apply(++index, T0, release("lock/a", token));
    assertEquals(List.of(token), historyOf("lock/a").stream().map(EndedLease::getToken).toList());
    assertEquals(1, count(Space.NAME_HISTORY));
  }

  // ---- lock-delay ----

  @Test
  void afterAnExpiryTheNameIsRefusedForTheLockDelayWithWhatRemains() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(10))));
    granted(apply(2, T0, acquire("lock/a", "alice", secs(5))));
    apply(3, T0 + 20 * SECOND, expire("lock/a", 2, 2));
    Rejection r = rejected(apply(4, T0 + 25 * SECOND, acquire("lock/a", "bob")));
    assertEquals(RejectReason.LOCK_DELAY, r.getReason());
    assertEquals(secs(5), r.getRetryAfter());
    assertEquals(RejectReason.LOCK_DELAY, rejected(apply(5, T0 + 29 * SECOND, acquire("lock/a", "alice"))).getReason(),
        "the former holder too");
    granted(apply(6, T0 + 30 * SECOND, acquire("lock/a", "bob")));
    granted(apply(7, T0 + 30 * SECOND, acquire("lock/b", "bob")));
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
    assertEquals(RejectReason.LOCK_DELAY, rejected(apply(9, T0 + SECOND, acquire("lock/revoked", "bob"))).getReason());
    assertEquals(RejectReason.LOCK_DELAY, rejected(apply(10, T0 + SECOND, acquire("lock/banned", "bob"))).getReason());
  }

  @Test
  void lockDelayIsReplicatedStateThatSurvivesAReloadAndASnapshot() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(10))));
    granted(apply(2, T0, acquire("lock/a", "alice")));
    apply(3, T0 + SECOND, revoke("lock/a", ""));
    byte[] snapshot = StoreKind.dump(store);

    core = new LeaseCore(store);
    assertEquals(secs(8), rejected(apply(4, T0 + 3 * SECOND, acquire("lock/a", "bob"))).getRetryAfter());
    for (StoreKind kind : StoreKind.values()) {
      try (KvStore other = kind.open(tempDir.resolve("other-" + kind))) {
        StoreKind.load(other, snapshot);
        LeaseCore restored = new LeaseCore(other);
        ApplyResult r = restored.apply(TERM, 4, acquire("lock/a", "bob").setLeaderTimeMicros(T0 + 3 * SECOND).build());
        assertEquals(RejectReason.LOCK_DELAY, r.reply().getAcquire().getRejection().getReason(), kind.toString());
      }
    }
  }

  @Test
  void passedLockDelaysAreDroppedFromTheState() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setLockDelay(secs(5))));
    long index = 1;
    for (int i = 0; i < 3; i++) {
      granted(apply(++index, T0, acquire("lock/n" + i, "alice")));
      apply(++index, T0, revoke("lock/n" + i, ""));
    }
    assertEquals(3, count(Space.LOCK_DELAYS));
    apply(++index, T0 + 6 * SECOND, acquire("svc/unrelated", "bob"));
    assertEquals(0, count(Space.LOCK_DELAYS), "any later entry drops the delays that have passed");
  }

  // ---- states ----

  @Test
  void getAndListShowAnActiveLeaseAsStaleOnceItsLastRenewalIsOlderThanTwoHeartbeats() throws IOException {
    apply(1, T0, setPolicy("lock", policy().setHeartbeatInterval(secs(1))));
    granted(apply(2, T0, acquire("lock/a", "alice", secs(30))));
    granted(apply(3, T0, acquire("svc/b", "alice", secs(30))));
    assertEquals(LeaseState.ACTIVE, get("lock/a", T0 + 2 * SECOND).getLease().getState());
    assertEquals(LeaseState.STALE, get("lock/a", T0 + 2 * SECOND + 1).getLease().getState());
    Map<String, LeaseState> listed = list("", 0, "", T0 + 3 * SECOND).getLeasesList().stream()
        .collect(Collectors.toMap(l -> l.getName(), l -> l.getState()));
    assertEquals(Map.of("lock/a", LeaseState.STALE, "svc/b", LeaseState.ACTIVE), listed, "svc/b's heartbeat is 10 s");
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
    assertEquals(1, c.lateHeartbeats(), "lock/a's renewal came after it expired; lock/b's had a wrong token");
    assertEquals(1, c.rejected(RejectReason.TTL_OUT_OF_RANGE));
    assertEquals(1, c.rejected(RejectReason.BANNED));
    assertEquals(0, c.rejected(RejectReason.LOCK_DELAY));
  }

  // ---- helpers ----

  private List<io.leasehold.proto.v1.Ban> bans() {
    return query(ReadQuery.newBuilder().setListBans(ListBansRequest.getDefaultInstance()), 0).getListBans().getBansList();
  }

  private int count(Space space) {
    return store.read(view -> {
      int[] n = {0};
      view.scan(space, new byte[0], new byte[0], (k, v) -> {
        n[0]++;
        return true;
      });
      return n[0];
    });
  }
}
