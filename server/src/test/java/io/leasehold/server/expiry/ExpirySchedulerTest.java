package io.leasehold.server.expiry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.DeadlineExtension;
import io.leasehold.proto.v1.DeadlineQueryItem;
import io.leasehold.proto.v1.ExpireItem;
import io.leasehold.proto.v1.ExpireSessionItem;
import io.leasehold.proto.v1.LeaderDeadline;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.StoredSession;
import io.leasehold.statemachine.core.LeaseEvent;
import io.leasehold.statemachine.core.SessionChange;
import io.leasehold.statemachine.core.TimedBar;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The leader's expiry decisions, driven by a fake monotonic clock. */
class ExpirySchedulerTest {
  static final long MS = 1_000_000L;
  static final long TICK = 100 * MS;
  static final long STALL = 500 * MS;

  final ExpiryScheduler scheduler = new ExpiryScheduler(TICK, STALL);
  long now = 1_000_000 * MS;
  long applied = 10;

  static LeaseRecord lease(long token, long lastRenew, long ttlMs) {
    return LeaseRecord.newBuilder()
        .setHolder("h")
        .setToken(token)
        .setLastRenewRevision(lastRenew)
        .setTtlMicros(ttlMs * 1000)
        .build();
  }

  /** Advances the clock in normal ticks, collecting what expires. */
  List<ExpireItem> runFor(long millis) {
    List<ExpireItem> expired = new java.util.ArrayList<>();
    for (long t = 0; t < millis * MS; t += TICK) {
      now += TICK;
      expired.addAll(scheduler.tick(now, applied, applied, 1000));
    }
    return expired;
  }

  static StoredSession session(long lastRenew, long ttlMs) {
    return StoredSession.newBuilder()
        .setHolder("h")
        .setLastRenewRevision(lastRenew)
        .setTtlMicros(ttlMs * 1000)
        .build();
  }

  /** Advances the clock in normal ticks, collecting the sessions that expire. */
  List<ExpireSessionItem> sessionsFor(long millis) {
    List<ExpireSessionItem> expired = new java.util.ArrayList<>();
    for (long t = 0; t < millis * MS; t += TICK) {
      now += TICK;
      scheduler.tick(now, applied, applied, 1000);
      expired.addAll(scheduler.dueSessions(now, 1000));
    }
    return expired;
  }

  @Test
  void aSessionExpiresOneTtlAfterItsLastKeepAliveAndItsLeasesHaveNoDeadline() {
    scheduler.promote(now);
    scheduler.onSession(new SessionChange(512, Optional.of(session(2, 2000))), now);
    LeaseRecord attached = lease(768, 3, 2000).toBuilder().setSession(512).build();
    scheduler.onEvent(new LeaseEvent(LeaseEvent.Type.ACQUIRED, 3, "lock/a", attached, 0), now);
    assertEquals(0, scheduler.tracked(), "an attached lease ends with its session");
    assertEquals(List.of(), sessionsFor(1500));
    scheduler.onSession(new SessionChange(512, Optional.of(session(9, 2000))), now);
    assertEquals(List.of(), sessionsFor(1900));
    List<ExpireSessionItem> due = sessionsFor(200);
    assertEquals(
        List.of(ExpireSessionItem.newBuilder().setSession(512).setLastRenewRevision(9).build()),
        due);
    assertEquals(List.of(), runFor(5000), "no lease of its own came due");
  }

  @Test
  void anEndedSessionIsForgottenAndANewLeaderGivesEveryOneAFullTtl() {
    scheduler.promote(now);
    scheduler.onSession(new SessionChange(512, Optional.of(session(2, 2000))), now);
    scheduler.onSession(new SessionChange(512, Optional.empty()), now);
    assertEquals(List.of(), sessionsFor(3000));

    scheduler.demote();
    scheduler.promote(now);
    scheduler.trackSession(1024, session(4, 2000), now);
    assertEquals(List.of(), sessionsFor(1900));
    assertEquals(1, sessionsFor(200).size());
  }

  @Test
  void aStallMovesSessionDeadlinesOutLikeLeases() {
    scheduler.promote(now);
    scheduler.onSession(new SessionChange(512, Optional.of(session(2, 2000))), now);
    sessionsFor(1000);
    now += 10_000 * MS;
    scheduler.tick(now, applied, applied, 1000);
    assertEquals(
        List.of(), scheduler.dueSessions(now, 1000), "nothing expires in the turn after a stall");
    // Due one TTL after the keep-alive plus the stall (less one tick): 900 ms after the stalled
    // turn.
    assertEquals(List.of(), sessionsFor(800));
    assertEquals(1, sessionsFor(200).size());
  }

  @Test
  void aNamespaceThatMovesAwayIsForgottenAndNothingOfItExpiresHere() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "moved/a", lease(5, 5, 2000), 0), now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 6, "moveda/b", lease(6, 6, 2000), 0), now);
    scheduler.forgetNamespace("moved");
    // Unanswered here, an Expire is proposed again and again: a dropped lease would be for ever.
    List<ExpireItem> expired = runFor(10_000);
    assertEquals(
        java.util.Set.of("moveda/b"),
        expired.stream().map(ExpireItem::getName).collect(java.util.stream.Collectors.toSet()),
        "only the other namespace's lease is proposed");
  }

  @Test
  void leaseExpiresOneTtlAfterItsGrantWasApplied() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "lock/a", lease(5, 5, 2000), 0), now);
    assertEquals(List.of(), runFor(1900));
    List<ExpireItem> expired = runFor(200);
    assertEquals(1, expired.size());
    assertEquals(
        ExpireItem.newBuilder().setName("lock/a").setToken(5).setLastRenewRevision(5).build(),
        expired.get(0));
  }

  @Test
  void renewalRestartsTheTtlAndTheExpireCarriesTheLatestRenewal() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "lock/a", lease(5, 5, 2000), 0), now);
    runFor(1500);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.RENEWED, 9, "lock/a", lease(5, 9, 2000), 0), now);
    assertEquals(List.of(), runFor(1900));
    assertEquals(9, runFor(200).get(0).getLastRenewRevision());
  }

  @Test
  void newLeaderExtendsEveryLeaseToAFullTtlBeforeExpiring() {
    // Found in the state at promotion: however old the last renewal, the lease gets a full TTL now.
    scheduler.promote(now);
    scheduler.track("lock/old", lease(3, 3, 2000), now);
    assertEquals(List.of(), runFor(1900));
    assertEquals(1, runFor(200).size());
  }

  @Test
  void eventsAppliedDuringPromotionWinOverTheScan() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.RENEWED, 20, "lock/a", lease(5, 20, 2000), 0), now);
    scheduler.track("lock/a", lease(5, 4, 2000), now);
    assertEquals(20, runFor(2100).get(0).getLastRenewRevision());
  }

  @Test
  void stalledTickerExtendsDeadlinesByTheStallBeforeExpiring() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "lock/a", lease(5, 5, 2000), 0), now);
    runFor(1000);
    now += 10_000 * MS; // a 10 s GC pause: the lease is long past its deadline on the clock
    assertEquals(
        List.of(),
        scheduler.tick(now, applied, applied, 1000),
        "nothing expires in the turn after a stall");
    assertEquals(1, scheduler.stalls());
    // The remaining second of TTL is still there after the stall.
    assertEquals(List.of(), runFor(800));
    assertEquals(1, runFor(400).size());
  }

  @Test
  void aDeliberateSkipBringsDeadlinesNearerInsteadOfCountingAStall() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "lock/a", lease(5, 5, 2000), 0), now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 6, "lock/b", lease(6, 6, 60_000), 0), now);
    runFor(1000);
    // A test moves the clock 10 s forward (ExpiryClock.advance): the same jump as the stall
    // above, told as a skip.
    now += 10_000 * MS;
    scheduler.skip(10_000 * MS);
    assertEquals(
        List.of("lock/a"),
        scheduler.tick(now, applied, applied, 1000).stream().map(ExpireItem::getName).toList(),
        "the lease the skip took past its deadline expires in the next turn");
    assertEquals(0, scheduler.stalls());
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.EXPIRED, 7, "lock/a", lease(5, 5, 2000), 0), now);
    assertEquals(List.of(), runFor(1000), "lock/b has its TTL less the skip left");
    assertTrue(scheduler.remainingNanos("lock/b", now).orElseThrow() < 50_000 * MS);
  }

  @Test
  void stalledApplyLoopExpiresNothingAndThenExtendsDeadlines() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "lock/a", lease(5, 5, 2000), 0), now);
    runFor(1000);
    // Entries are committed but the apply loop makes no progress for 5 s (a slow disk).
    long commit = applied + 50;
    for (int i = 0; i < 50; i++) {
      now += TICK;
      assertEquals(List.of(), scheduler.tick(now, applied, commit, 1000));
    }
    applied = commit;
    now += TICK;
    assertEquals(
        List.of(),
        scheduler.tick(now, applied, commit, 1000),
        "the turn the apply loop resumes only extends");
    assertTrue(
        scheduler.remainingNanos("lock/a", now).orElseThrow() > 500 * MS,
        "the stall was given back");
  }

  @Test
  void dueLeaseIsNotProposedAgainUntilTheRetryInterval() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "lock/a", lease(5, 5, 2000), 0), now);
    assertEquals(1, runFor(2100).size());
    assertEquals(List.of(), runFor(500), "in flight: not proposed again yet");
    assertEquals(1, runFor(1000).size(), "its reply was lost: proposed again");
  }

  @Test
  void endedLeaseIsForgottenButOnlyForItsOwnToken() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "lock/a", lease(5, 5, 2000), 0), now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.RELEASED, 6, "lock/a", lease(4, 4, 2000), 0), now);
    assertEquals(1, scheduler.tracked(), "an ending of an older lease on the name changes nothing");
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.RELEASED, 7, "lock/a", lease(5, 5, 2000), 0), now);
    assertEquals(0, scheduler.tracked());
    assertEquals(List.of(), runFor(3000));
  }

  @Test
  void theGracePeriodRecordedWithTheLeaseIsAddedToItsDeadline() {
    scheduler.promote(now);
    LeaseRecord graced = lease(5, 5, 2000).toBuilder().setGraceMicros(1_000_000).build();
    scheduler.onEvent(new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "lock/a", graced, 0), now);
    scheduler.track(
        "lock/found", lease(3, 3, 2000).toBuilder().setGraceMicros(1_000_000).build(), now);
    assertEquals(List.of(), runFor(2900), "not at the TTL: the TTL plus the grace period");
    assertEquals(2, runFor(200).size());
  }

  @Test
  void revokedAndBannedLeasesAreForgotten() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "lock/a", lease(5, 5, 2000), 0), now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 6, "lock/b", lease(6, 6, 2000), 0), now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.REVOKED, 7, "lock/a", lease(5, 5, 2000), 0), now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.BANNED, 8, "lock/b", lease(6, 6, 2000), 0), now);
    scheduler.onEvent(
        new LeaseEvent(
            LeaseEvent.Type.POLICY_CHANGED, 9, "lock/", LeaseRecord.getDefaultInstance(), 0),
        now);
    assertEquals(0, scheduler.tracked());
    assertEquals(List.of(), runFor(3000));
  }

  @Test
  void demotedSchedulerTracksAndExpiresNothing() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 5, "lock/a", lease(5, 5, 2000), 0), now);
    scheduler.demote();
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 6, "lock/b", lease(6, 6, 2000), 0), now);
    assertEquals(0, scheduler.tracked());
    assertEquals(List.of(), runFor(5000));
  }

  @Test
  void batchesAreBounded() {
    scheduler.promote(now);
    for (int i = 0; i < 2500; i++) {
      scheduler.track("lock/" + i, lease(i + 1, i + 1, 2000), now);
    }
    assertEquals(List.of(), runFor(1900));
    now += 2 * TICK;
    int total = 0;
    for (int i = 0; i < 5; i++) {
      List<ExpireItem> batch = scheduler.tick(now, applied, applied, 1000);
      assertTrue(batch.size() <= 1000);
      total += batch.size();
    }
    assertEquals(2500, total);
  }

  @Test
  void leasesExpireInDeadlineOrderWhateverTheOrderTheyWereTracked() {
    scheduler.promote(now);
    long[] ttls = {5000, 2000, 4000, 3000};
    for (int i = 0; i < ttls.length; i++) {
      scheduler.onEvent(
          new LeaseEvent(
              LeaseEvent.Type.ACQUIRED, i + 1, "lock/" + i, lease(i + 1, i + 1, ttls[i]), 0),
          now);
    }
    List<String> order = new java.util.ArrayList<>();
    for (int t = 0; t < 60; t++) {
      runFor(100)
          .forEach(
              e -> {
                order.add(e.getName());
                applyExpire(e);
              });
    }
    assertEquals(List.of("lock/1", "lock/3", "lock/2", "lock/0"), order);
  }

  @Test
  void manyRenewalsLeaveTheHeapBoundedAndOnlyTheLatestDeadlineCounts() {
    scheduler.promote(now);
    for (int i = 0; i < 100; i++) {
      scheduler.onEvent(
          new LeaseEvent(
              LeaseEvent.Type.ACQUIRED, i + 1, "lock/" + i, lease(i + 1, i + 1, 2000), 0),
          now);
    }
    // 100 leases renewed 100 times each, a tick apart: 10,000 heap entries if each renewal pushed
    // one.
    long revision = 1000;
    for (int round = 0; round < 100; round++) {
      assertEquals(List.of(), runFor(100));
      for (int i = 0; i < 100; i++) {
        revision++;
        scheduler.onEvent(
            new LeaseEvent(
                LeaseEvent.Type.RENEWED, revision, "lock/" + i, lease(i + 1, revision, 2000), 0),
            now);
      }
    }
    assertEquals(100, scheduler.queued(), "a renewal moves its lease's entry, it adds none");
    assertEquals(100, scheduler.tracked());
    // The deadlines the grants queued (long past) expire nothing: each goes back in at its
    // renewal's.
    assertEquals(List.of(), runFor(1900));
    List<ExpireItem> expired = runFor(200);
    assertEquals(100, expired.size());
    // Each Expire carries the lease's last renewal (round 99 renewed lock/i at revision 1000 + 9900
    // + i + 1).
    for (ExpireItem e : expired) {
      int i = Integer.parseInt(e.getName().substring("lock/".length()));
      assertEquals(1000 + 9900 + i + 1, e.getLastRenewRevision(), e::toString);
    }
  }

  @Test
  void aRenewalToAnEarlierDeadlineThanTheQueuedOneIsHonouredAndALaterOneIsNotCutShort() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 1, "lock/short", lease(1, 1, 5000), 0), now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 2, "lock/long", lease(2, 2, 2000), 0), now);
    assertEquals(List.of(), runFor(1000));
    // lock/short renewed with a shorter TTL: due at 3 s, before the 5 s its first entry sits at.
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.RENEWED, 3, "lock/short", lease(1, 3, 2000), 0), now);
    // lock/long renewed with a longer one: due at 6 s, after the 2 s its entry sits at.
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.RENEWED, 4, "lock/long", lease(2, 4, 5000), 0), now);
    assertEquals(List.of(), runFor(1900));
    List<ExpireItem> first = runFor(200);
    assertEquals(
        List.of("lock/short"), first.stream().map(ExpireItem::getName).toList(), "due at 3 s");
    assertEquals(3, first.get(0).getLastRenewRevision());
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.EXPIRED, 5, "lock/short", lease(1, 3, 2000), 0), now);
    assertEquals(
        List.of(),
        runFor(2800),
        "lock/long is not due before 6 s, although its first entry surfaced at 2 s");
    List<ExpireItem> second = runFor(200);
    assertEquals(List.of("lock/long"), second.stream().map(ExpireItem::getName).toList());
    assertEquals(4, second.get(0).getLastRenewRevision(), "the Expire carries the latest renewal");
  }

  @Test
  void aStallMovesEveryDeadlineIncludingLeasesTrackedAfterIt() {
    scheduler.promote(now);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 1, "lock/a", lease(1, 1, 2000), 0), now);
    runFor(1000);
    now += 3000 * MS; // a 3 s stall: lock/a gets the time back
    assertEquals(List.of(), scheduler.tick(now, applied, applied, 1000));
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 2, "lock/b", lease(2, 2, 2000), 0), now);
    // lock/a had 1 s left, less the one normal tick the stall's turn stands for.
    assertEquals(List.of(), runFor(800));
    List<ExpireItem> expired = runFor(200);
    assertEquals(
        List.of("lock/a"),
        expired.stream().map(ExpireItem::getName).collect(java.util.stream.Collectors.toList()));
    expired.forEach(this::applyExpire);
    assertEquals(
        List.of("lock/b"),
        runFor(1000).stream()
            .map(ExpireItem::getName)
            .collect(java.util.stream.Collectors.toList()));
  }

  /** The proposed Expire was applied: the lease ended. */
  private void applyExpire(ExpireItem e) {
    scheduler.onEvent(
        new LeaseEvent(
            LeaseEvent.Type.EXPIRED,
            ++applied,
            e.getName(),
            lease(e.getToken(), e.getLastRenewRevision(), 2000),
            0),
        now);
  }

  // ---- deadlines as reads show them ----

  static final long WALL =
      1_700_000_000_000_000L; // the wall clock (micros) at `now`, for dating extensions

  static DeadlineQueryItem item(String name, long token) {
    return DeadlineQueryItem.newBuilder().setName(name).setToken(token).build();
  }

  @Test
  void aLeaseFoundAtPromotionShowsTheFreshTtlAndTheLeaderChangeThatGaveIt() {
    applied = 40;
    long promotedAt = now;
    scheduler.promote(now, applied, 7);
    scheduler.track("lock/old", lease(3, 3, 2000).toBuilder().setGraceMicros(500_000).build(), now);
    runFor(300);
    LeaderDeadline d = scheduler.deadline(item("lock/old", 3), now, WALL);
    assertTrue(d.getTracked());
    assertEquals(3, d.getLastRenewRevision());
    assertEquals(
        2500 - 300,
        d.getRemainingMicros() / 1000,
        "TTL + grace from the promotion, as the expiry counts it");
    assertEquals(1, d.getExtensionsCount());
    DeadlineExtension e = d.getExtensions(0);
    assertEquals(DeadlineExtension.Reason.LEADER_CHANGE, e.getReason());
    assertEquals(7, e.getTerm());
    assertEquals(
        WALL - (now - promotedAt) / 1000,
        e.getAt().getSeconds() * 1_000_000L + e.getAt().getNanos() / 1000,
        "dated when the leader took over, by its wall clock");
    // The expiry acts on exactly that deadline.
    assertEquals(List.of(), runFor(2100));
    assertEquals(List.of("lock/old"), runFor(100).stream().map(ExpireItem::getName).toList());
  }

  @Test
  void aRenewalAfterThePromotionCountsFromItselfAndNamesNoExtension() {
    scheduler.promote(now, applied, 7);
    scheduler.track("lock/a", lease(3, 3, 2000), now);
    runFor(1000);
    scheduler.onEvent(
        new LeaseEvent(
            LeaseEvent.Type.RENEWED, applied + 5, "lock/a", lease(3, applied + 5, 2000), 0),
        now);
    LeaderDeadline d = scheduler.deadline(item("lock/a", 3), now, WALL);
    assertEquals(2000, d.getRemainingMicros() / 1000);
    assertEquals(List.of(), d.getExtensionsList());
  }

  @Test
  void aStallShowsAsAnExtensionOfTheLeasesRenewedBeforeIt() {
    scheduler.promote(now, applied, 2);
    scheduler.onEvent(
        new LeaseEvent(
            LeaseEvent.Type.ACQUIRED, applied + 1, "lock/a", lease(1, applied + 1, 2000), 0),
        now);
    applied += 1;
    runFor(1000);
    now += 3000 * MS; // a 3 s stall
    scheduler.tick(now, applied, applied, 1000);
    scheduler.onEvent(
        new LeaseEvent(
            LeaseEvent.Type.ACQUIRED, applied + 1, "lock/b", lease(2, applied + 1, 2000), 0),
        now);
    LeaderDeadline a = scheduler.deadline(item("lock/a", 1), now, WALL);
    assertEquals(
        List.of(DeadlineExtension.Reason.STALL),
        a.getExtensionsList().stream().map(DeadlineExtension::getReason).toList());
    assertEquals(
        2900,
        a.getExtensions(0).getBy().getSeconds() * 1000
            + a.getExtensions(0).getBy().getNanos() / 1_000_000,
        "the stall less the tick its turn stands for");
    assertEquals(
        2000 + 2900 - 4000,
        a.getRemainingMicros() / 1000,
        "its TTL, moved out by the stall, less the time since the grant");
    assertEquals(
        List.of(),
        scheduler.deadline(item("lock/b", 2), now, WALL).getExtensionsList(),
        "granted after the stall");
  }

  @Test
  void aLeaseWhoseExpireIsProposedIsDueNowAndOthersAreNotTracked() {
    scheduler.promote(now, applied, 1);
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.ACQUIRED, 20, "lock/a", lease(5, 20, 2000), 0), now);
    assertEquals(1, runFor(2100).size());
    LeaderDeadline due = scheduler.deadline(item("lock/a", 5), now, WALL);
    assertTrue(due.getTracked());
    assertEquals(0, due.getRemainingMicros(), "being expired: not the re-propose interval");
    assertFalse(scheduler.deadline(item("lock/a", 4), now, WALL).getTracked(), "another token");
    assertFalse(scheduler.deadline(item("lock/none", 1), now, WALL).getTracked());
    scheduler.onEvent(
        new LeaseEvent(LeaseEvent.Type.RENEWED, 21, "lock/a", lease(5, 21, 2000), 0), now);
    assertEquals(
        2000,
        scheduler.deadline(item("lock/a", 5), now, WALL).getRemainingMicros() / 1000,
        "renewed in time: a fresh TTL");
    scheduler.demote();
    assertFalse(
        scheduler.deadline(item("lock/a", 5), now, WALL).getTracked(),
        "a demoted scheduler knows no deadline");
  }

  @Test
  void aLeaseAttachedToASessionShowsTheSessionsDeadline() {
    scheduler.promote(now, applied, 3);
    scheduler.trackSession(512, session(4, 3000), now);
    runFor(500);
    LeaderDeadline d =
        scheduler.deadline(
            DeadlineQueryItem.newBuilder().setName("lock/a").setToken(768).setSession(512).build(),
            now,
            WALL);
    assertTrue(d.getTracked());
    assertEquals(2500, d.getRemainingMicros() / 1000);
    assertEquals(DeadlineExtension.Reason.LEADER_CHANGE, d.getExtensions(0).getReason());
  }

  // ---- lifts: lock-delays and timed bans ----

  static TimedBar bar(TimedBar.Kind kind, String key, long revision, long holdMs) {
    return new TimedBar(kind, key, revision, holdMs * 1000, false);
  }

  /** Advances the clock in normal ticks, collecting the bars to lift. */
  List<TimedBar> liftsFor(long millis) {
    List<TimedBar> due = new java.util.ArrayList<>();
    for (long t = 0; t < millis * MS; t += TICK) {
      now += TICK;
      scheduler.tick(now, applied, applied, 1000);
      due.addAll(scheduler.dueLifts(now, 1000));
    }
    return due;
  }

  @Test
  void aLockDelayIsLiftedOneDelayAfterTheEndingWasAppliedWithTheEndingsRevision() {
    scheduler.promote(now);
    scheduler.promoted();
    scheduler.onBar(bar(TimedBar.Kind.LOCK_DELAY, "lock/a", 7, 3000), now);
    assertEquals(List.of(), liftsFor(2900));
    List<TimedBar> due = liftsFor(200);
    assertEquals(1, due.size());
    assertEquals(TimedBar.Kind.LOCK_DELAY, due.get(0).kind());
    assertEquals("lock/a", due.get(0).key());
    assertEquals(7, due.get(0).revision());
    // Proposed again only after the re-propose interval, and never once the bar is gone.
    assertEquals(List.of(), liftsFor(500));
    scheduler.onBar(new TimedBar(TimedBar.Kind.LOCK_DELAY, "lock/a", 0, 0, true), now);
    assertEquals(List.of(), liftsFor(5000));
    assertEquals(0, scheduler.trackedBars());
  }

  @Test
  void aNewLeaderGivesEveryBarItsHoldFromNowAndEntriesAppliedMeanwhileWin() {
    scheduler.promote(now);
    // Applied after the promotion, before the scan's view: the scan's older news is ignored.
    scheduler.onBar(new TimedBar(TimedBar.Kind.LOCK_DELAY, "lock/gone", 0, 0, true), now);
    scheduler.onBar(bar(TimedBar.Kind.BAN, "alice", 9, 1000), now);
    scheduler.trackBar(bar(TimedBar.Kind.LOCK_DELAY, "lock/gone", 3, 2000), now);
    scheduler.trackBar(bar(TimedBar.Kind.BAN, "alice", 4, 2000), now);
    scheduler.trackBar(bar(TimedBar.Kind.LOCK_DELAY, "lock/old", 5, 2000), now);
    scheduler.promoted();
    List<TimedBar> first = liftsFor(1100);
    assertEquals(1, first.size());
    assertEquals(9, first.get(0).revision(), "the ban as applied after the promotion");
    assertEquals(List.of(), liftsFor(800));
    List<TimedBar> second = liftsFor(200);
    assertEquals(
        List.of("lock/old"),
        second.stream()
            .filter(b -> b.kind() == TimedBar.Kind.LOCK_DELAY)
            .map(TimedBar::key)
            .toList(),
        "a full delay from the promotion; lock/gone, removed meanwhile, never");
  }

  @Test
  void aStallMovesLiftsOutLikeExpiriesAndLiftsNothingInItsTurn() {
    scheduler.promote(now);
    scheduler.promoted();
    scheduler.onBar(bar(TimedBar.Kind.LOCK_DELAY, "lock/a", 7, 2000), now);
    liftsFor(1000);
    now += 10_000 * MS;
    scheduler.tick(now, applied, applied, 1000);
    assertEquals(
        List.of(), scheduler.dueLifts(now, 1000), "nothing is lifted in the turn after a stall");
    assertEquals(List.of(), liftsFor(800), "the remaining second is still there after the stall");
    assertEquals(1, liftsFor(300).size());
  }

  @Test
  void aDemotedSchedulerLiftsNothingAndForgetsItsBars() {
    scheduler.promote(now);
    scheduler.promoted();
    scheduler.onBar(bar(TimedBar.Kind.BAN, "alice", 2, 100), now);
    scheduler.demote();
    assertEquals(0, scheduler.trackedBars());
    now += 1000 * MS;
    assertEquals(List.of(), scheduler.dueLifts(now, 1000));
  }
}
