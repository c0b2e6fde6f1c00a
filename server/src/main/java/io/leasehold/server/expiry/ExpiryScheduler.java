package io.leasehold.server.expiry;

import com.google.protobuf.Timestamp;
import io.leasehold.proto.v1.DeadlineExtension;
import io.leasehold.proto.v1.DeadlineQueryItem;
import io.leasehold.proto.v1.ExpireItem;
import io.leasehold.proto.v1.ExpireSessionItem;
import io.leasehold.proto.v1.LeaderDeadline;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.StoredSession;
import io.leasehold.statemachine.core.LeaseEvent;
import io.leasehold.statemachine.core.NameTable;
import io.leasehold.statemachine.core.SessionChange;
import io.leasehold.statemachine.core.TimedBar;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * The leader's lease deadlines on its monotonic clock (TTL plus the lease's grace period), and the
 * decision of what has expired. Pure: every method takes the time, so tests drive it with a fake
 * clock.
 *
 * <p>Lifecycle (after etcd's lessor): {@link #promote} when this node becomes leader, {@link
 * #demote} when it stops; only a promoted scheduler tracks or expires anything.
 *
 * <p>Deadlines sit in a min-heap by due time (as etcd's lessor keeps its lease queue), so a tick
 * costs only the leases that are due, not one visit per live lease: with a million leases and a
 * tick every 100 ms, a full scan was the ticker's whole cost and held this lock (which the apply
 * thread needs for every event) for milliseconds. A renewal moves its lease's deadline later in
 * place, and the entry goes back into the heap at its new time when it surfaces; a new grant pushes
 * a new entry and leaves the old one behind, skipped when it surfaces, and the heap is rebuilt when
 * such leftovers outnumber the live entries.
 *
 * <p>It also decides when the bars it must lift are due (lock-delays and timed bans, {@link
 * TimedBar}), on the same clock and with the same rules: a bar applied while this node leads is due
 * its hold after the apply; on promotion every bar in the state is due its hold (a lock-delay's
 * full delay, a ban's remainder by stamped time) from now; a stall moves lifts out like expiries,
 * and a stalled turn lifts nothing.
 *
 * <p>Sessions have deadlines of their own, kept and decided like the leases' (a keep-alive restarts
 * the TTL, a new leader gives each a full TTL, a stall moves them out); a lease attached to a
 * session has none: it ends with its session.
 *
 * <p>Reads show these deadlines ({@link #deadline}): a lease whose last renewal this leader found
 * in the state when it took over was extended by the leader change, and one renewed before a stall
 * was extended by the stall. Neither is in the log, so only the leader can say.
 */
public final class ExpiryScheduler {
  private final long tickNanos;
  private final long stallThresholdNanos;
  private final long reproposeAfterNanos;

  /** The current deadline of each tracked lease (one a live lease: a table without map nodes). */
  private final NameTable<Deadline> deadlines = new NameTable<>(d -> d.name);

  /** Every current deadline, and stale ones not yet surfaced; ordered by due time. */
  private final PriorityQueue<Deadline> queue =
      new PriorityQueue<>((a, b) -> Long.compare(a.queuedNanos, b.queuedNanos));

  /**
   * Added to every stored due time: a stall moves all deadlines out by the same amount, which
   * leaves the heap's order as it is, so it is one addition here instead of a pass over the heap.
   */
  private long shiftNanos;

  private boolean active;
  private long lastTickNanos;

  /**
   * When this node last became the deciding leader; every lease found then is due no sooner than
   * this plus its TTL.
   */
  private long promotedAtNanos;

  /**
   * The applied index when this node took over, and its term: a lease (or session) last renewed at
   * or below it got its fresh TTL from the leader change, not from its renewal.
   */
  private long promotedIndex = -1;

  private long promotedTerm;

  /**
   * The latest stalls since the promotion, oldest first, at most {@link #STALLS_KEPT}: what reads
   * say moved a deadline out.
   */
  private final ArrayDeque<Stall> stallLog = new ArrayDeque<>();

  static final int STALLS_KEPT = 32;

  /**
   * Leases and sessions whose Expire is proposed and not yet applied: due now, whatever the heap
   * says.
   */
  private final Set<String> proposedLeases = new HashSet<>();

  private final Set<Long> proposedSessions = new HashSet<>();
  private long lastAppliedIndex = -1;
  private long lastApplyProgressNanos;
  private boolean applyStalled;
  private long stalls;

  /** The latest turn moved deadlines out (or waited for the apply loop): nothing is due in it. */
  private boolean quietTurn;

  /** The current deadline of each tracked session. */
  private final Map<Long, SessionDeadline> sessions = new HashMap<>();

  private final PriorityQueue<SessionDeadline> sessionQueue =
      new PriorityQueue<>((a, b) -> Long.compare(a.dueNanos, b.dueNanos));

  /** The current lift of each tracked bar. */
  private final Map<BarKey, Lift> lifts = new HashMap<>();

  private final PriorityQueue<Lift> liftQueue =
      new PriorityQueue<>((a, b) -> Long.compare(a.dueNanos, b.dueNanos));

  /**
   * While a new leader reads the bars in the state ({@link #trackBar}): the bars an applied entry
   * changed since {@link #promote}, which are newer than (or as new as) what the read sees. Null
   * once the read is done.
   */
  private Set<BarKey> changedWhilePromoting;

  private record BarKey(TimedBar.Kind kind, String key) {}

  /**
   * A stall that moved every deadline out: when it ended, by how much, and the applied index then.
   */
  private record Stall(long atNanos, long byNanos, long appliedIndex) {}

  /** A tracked bar: what its lift must carry, and when it is due (minus {@link #shiftNanos}). */
  private static final class Lift {
    final BarKey key;
    final long revision;
    long dueNanos;

    Lift(BarKey key, long revision, long dueNanos) {
      this.key = key;
      this.revision = revision;
      this.dueNanos = dueNanos;
    }
  }

  /**
   * A tracked session: what its Expire must carry, and when it is due (minus {@link #shiftNanos}).
   */
  private static final class SessionDeadline {
    final long id;
    final long lastRenewRevision;
    long dueNanos;

    SessionDeadline(long id, long lastRenewRevision, long dueNanos) {
      this.id = id;
      this.lastRenewRevision = lastRenewRevision;
      this.dueNanos = dueNanos;
    }
  }

  /**
   * A tracked lease: what an Expire must carry, and when it is due (minus {@link #shiftNanos}). A
   * renewal moves {@link #dueNanos} later in place; the heap orders by {@link #queuedNanos}, which
   * changes only while the entry is out of the heap, so one entry a lease stands however often it
   * is renewed.
   */
  private static final class Deadline {
    final String name;
    final long token;
    long lastRenewRevision;
    long dueNanos;

    /** Where the heap has it: at or before {@link #dueNanos}. */
    long queuedNanos;

    Deadline(String name, long token, long lastRenewRevision, long dueNanos) {
      this.name = name;
      this.token = token;
      this.lastRenewRevision = lastRenewRevision;
      this.dueNanos = dueNanos;
      this.queuedNanos = dueNanos;
    }
  }

  public ExpiryScheduler(long tickNanos, long stallThresholdNanos) {
    this.tickNanos = tickNanos;
    this.stallThresholdNanos = stallThresholdNanos;
    // An Expire whose reply was lost is proposed again after this long; the guard makes repeats
    // harmless.
    this.reproposeAfterNanos = Math.max(tickNanos * 10, 1_000_000_000L);
  }

  /**
   * Becomes the deciding leader. Every lease then gets a fresh full TTL (via {@link #track}),
   * because a renewal may have reached the old leader just before it died.
   */
  public synchronized void promote(long nowNanos) {
    promote(nowNanos, -1, 0);
  }

  /**
   * As {@link #promote(long)}, saying which leases were renewed before this leader took over (at or
   * below {@code appliedIndex}, as applied when it did) and in which term, for reads.
   */
  public synchronized void promote(long nowNanos, long appliedIndex, long term) {
    clear();
    active = true;
    promotedAtNanos = nowNanos;
    promotedIndex = appliedIndex;
    promotedTerm = term;
    lastTickNanos = nowNanos;
    lastApplyProgressNanos = nowNanos;
    lastAppliedIndex = -1;
    applyStalled = false;
    quietTurn = false;
    changedWhilePromoting = new HashSet<>();
  }

  /**
   * Adds a bar found in the state when promoted, due its hold from now, unless an entry applied
   * since {@link #promote} already changed it (then that entry's news stands).
   */
  public synchronized void trackBar(TimedBar bar, long nowNanos) {
    BarKey key = new BarKey(bar.kind(), bar.key());
    if (active
        && !bar.removed()
        && !lifts.containsKey(key)
        && (changedWhilePromoting == null || !changedWhilePromoting.contains(key))) {
      putLift(key, bar, nowNanos);
    }
  }

  /** The bars in the state have all been read ({@link #trackBar}). */
  public synchronized void promoted() {
    changedWhilePromoting = null;
  }

  /** Adds a lease found in the state when promoted, unless an applied event already tracks it. */
  public synchronized void track(String name, LeaseRecord lease, long nowNanos) {
    if (active && !deadlines.containsKey(name)) {
      put(name, lease, nowNanos);
    }
  }

  /** Adds a session found in the state when promoted, unless an applied entry already tracks it. */
  public synchronized void trackSession(long id, StoredSession session, long nowNanos) {
    if (active && !sessions.containsKey(id)) {
      putSession(id, session, nowNanos);
    }
  }

  /**
   * Follows an applied change to a session: created or kept alive restarts its TTL; ended forgets
   * it.
   */
  public synchronized void onSession(SessionChange change, long nowNanos) {
    if (!active) {
      return;
    }
    if (!proposedSessions.isEmpty()) {
      proposedSessions.remove(change.id());
    }
    if (change.session().isPresent()) {
      putSession(change.id(), change.session().get(), nowNanos);
    } else {
      sessions.remove(change.id()); // its heap entry stays behind, stale
    }
  }

  /**
   * The sessions to expire now (at most {@code max}), as of the latest {@link #tick}: nothing in a
   * turn that a stall made quiet. Like a lease's, a session's Expire is proposed again after the
   * re-propose interval if nothing renewed or ended it meanwhile.
   */
  public synchronized List<ExpireSessionItem> dueSessions(long nowNanos, int max) {
    if (!active || quietTurn) {
      return List.of();
    }
    List<ExpireSessionItem> due = new ArrayList<>();
    while (due.size() < max
        && !sessionQueue.isEmpty()
        && sessionQueue.peek().dueNanos + shiftNanos - nowNanos <= 0) {
      SessionDeadline d = sessionQueue.poll();
      if (sessions.get(d.id) != d) {
        continue;
      }
      d.dueNanos = nowNanos + reproposeAfterNanos - shiftNanos;
      sessionQueue.add(d);
      proposedSessions.add(d.id);
      due.add(
          ExpireSessionItem.newBuilder()
              .setSession(d.id)
              .setLastRenewRevision(d.lastRenewRevision)
              .build());
    }
    return due;
  }

  public synchronized int trackedSessions() {
    return sessions.size();
  }

  /** Nanoseconds until the session is due (negative: overdue), if tracked. */
  public synchronized OptionalLong sessionRemainingNanos(long id, long nowNanos) {
    SessionDeadline d = sessions.get(id);
    return d == null ? OptionalLong.empty() : OptionalLong.of(d.dueNanos + shiftNanos - nowNanos);
  }

  private void putSession(long id, StoredSession session, long nowNanos) {
    if (session.getPart()) {
      // A lease group's part of a meta-group session ends with the session, not on this clock.
      return;
    }
    SessionDeadline d =
        new SessionDeadline(
            id,
            session.getLastRenewRevision(),
            nowNanos + session.getTtlMicros() * 1_000 - shiftNanos);
    sessions.put(id, d);
    sessionQueue.add(d);
    if (sessionQueue.size() > 2 * sessions.size() + 1024) {
      sessionQueue.clear();
      sessionQueue.addAll(sessions.values());
    }
  }

  /** Stops deciding and forgets every deadline: the next leader starts from full TTLs. */
  public synchronized void demote() {
    active = false;
    clear();
  }

  private void clear() {
    deadlines.clear();
    queue.clear();
    proposedLeases.clear();
    proposedSessions.clear();
    stallLog.clear();
    sessions.clear();
    sessionQueue.clear();
    lifts.clear();
    liftQueue.clear();
    changedWhilePromoting = null;
    shiftNanos = 0;
  }

  /**
   * Follows an applied change to a bar: a bar set is due its hold from now; one removed is
   * forgotten.
   */
  public synchronized void onBar(TimedBar bar, long nowNanos) {
    if (!active) {
      return;
    }
    BarKey key = new BarKey(bar.kind(), bar.key());
    if (changedWhilePromoting != null) {
      changedWhilePromoting.add(key);
    }
    if (bar.removed()) {
      lifts.remove(key); // its heap entry stays behind, stale
    } else {
      putLift(key, bar, nowNanos);
    }
  }

  /**
   * The bars to lift now (at most {@code max}), as of the latest {@link #tick}: nothing in a turn
   * that a stall made quiet. A bar proposed is proposed again after the re-propose interval if
   * nothing removed it meanwhile (the lift's guard makes a repeat harmless). The result carries
   * each bar's kind, key and revision.
   */
  public synchronized List<TimedBar> dueLifts(long nowNanos, int max) {
    if (!active || quietTurn) {
      return List.of();
    }
    List<TimedBar> due = new ArrayList<>();
    while (due.size() < max
        && !liftQueue.isEmpty()
        && liftQueue.peek().dueNanos + shiftNanos - nowNanos <= 0) {
      Lift l = liftQueue.poll();
      if (lifts.get(l.key) != l) {
        continue;
      }
      l.dueNanos = nowNanos + reproposeAfterNanos - shiftNanos;
      liftQueue.add(l);
      due.add(new TimedBar(l.key.kind(), l.key.key(), l.revision, 0, false));
    }
    return due;
  }

  public synchronized int trackedBars() {
    return lifts.size();
  }

  /** Nanoseconds until the bar is due (negative: overdue), if tracked. */
  public synchronized OptionalLong remainingNanos(TimedBar.Kind kind, String key, long nowNanos) {
    Lift l = lifts.get(new BarKey(kind, key));
    return l == null ? OptionalLong.empty() : OptionalLong.of(l.dueNanos + shiftNanos - nowNanos);
  }

  private void putLift(BarKey key, TimedBar bar, long nowNanos) {
    Lift l = new Lift(key, bar.revision(), nowNanos + bar.holdMicros() * 1_000 - shiftNanos);
    lifts.put(key, l);
    liftQueue.add(l);
    if (liftQueue.size() > 2 * lifts.size() + 1024) {
      liftQueue.clear();
      liftQueue.addAll(lifts.values());
    }
  }

  public synchronized boolean isActive() {
    return active;
  }

  /**
   * The {@link System#nanoTime} instant of the last {@link #promote}, the start of every
   * carried-over lease's fresh TTL.
   */
  public synchronized long promotedAtNanos() {
    return promotedAtNanos;
  }

  /**
   * Follows an applied change: a grant or renewal restarts the TTL from now; an ending forgets the
   * lease.
   */
  public synchronized void onEvent(LeaseEvent event, long nowNanos) {
    if (!active) {
      return;
    }
    switch (event.type()) {
      case ACQUIRED, RENEWED -> put(event.name(), event.lease(), nowNanos);
      case RELEASED, EXPIRED, REVOKED, BANNED, TRANSFERRED, SESSION_EXPIRED, SESSION_CLOSED -> {
        // Its heap entry stays behind, stale, until it surfaces or the heap is rebuilt.
        Deadline d = deadlines.get(event.name());
        if (d != null && d.token == event.lease().getToken()) {
          deadlines.remove(event.name());
          if (!proposedLeases.isEmpty()) {
            proposedLeases.remove(event.name());
          }
        }
      }
      case UPDATED, POLICY_CHANGED -> {}
    }
  }

  /**
   * A namespace's leases left this group's hands without an ending (a move froze or dropped the
   * namespace here): their deadlines are forgotten, and no Expire is proposed for them. A move
   * abandoned later unfreezes them, and they are tracked again from a full TTL.
   */
  public synchronized void forgetNamespace(String namespace) {
    String prefix = namespace + "/";
    List<String> names = new java.util.ArrayList<>();
    deadlines.forEach(
        d -> {
          if (d.name.startsWith(prefix)) {
            names.add(d.name);
          }
        });
    for (String name : names) {
      // Its heap entry stays behind, stale, until it surfaces or the heap is rebuilt.
      deadlines.remove(name);
      proposedLeases.remove(name);
    }
  }

  /**
   * The clock was moved forward on purpose by {@code nanos} ({@link ExpiryClock#advance}): the
   * deadlines stay where they are, so they come nearer, but the gap it makes between two turns, or
   * since the apply loop last moved, is not a stall.
   */
  public synchronized void skip(long nanos) {
    lastTickNanos += nanos;
    lastApplyProgressNanos += nanos;
  }

  /**
   * One turn of the ticker: returns the leases to expire now (at most {@code max}).
   *
   * <p>A stall does not punish clients. If this loop ran late (GC, an overloaded machine) or the
   * apply loop stopped making progress while entries were waiting, renewals may be queued that this
   * leader has not seen; so the stall is treated like a leader change: every deadline moves out by
   * its length and nothing expires in that turn.
   *
   * @param appliedIndex the state machine's applied index now
   * @param commitIndex the log's commit index now
   */
  public synchronized List<ExpireItem> tick(
      long nowNanos, long appliedIndex, long commitIndex, int max) {
    if (!active) {
      return List.of();
    }
    quietTurn = true;
    long gap = nowNanos - lastTickNanos;
    lastTickNanos = nowNanos;
    if (gap > tickNanos + stallThresholdNanos) {
      extendAll(gap - tickNanos, nowNanos, appliedIndex);
      return List.of();
    }
    if (appliedIndex != lastAppliedIndex || appliedIndex >= commitIndex) {
      if (applyStalled) {
        // The apply loop moved again: give every lease back the time it was stuck.
        extendAll(nowNanos - lastApplyProgressNanos, nowNanos, lastAppliedIndex);
        applyStalled = false;
        lastAppliedIndex = appliedIndex;
        lastApplyProgressNanos = nowNanos;
        return List.of();
      }
      lastAppliedIndex = appliedIndex;
      lastApplyProgressNanos = nowNanos;
    } else if (nowNanos - lastApplyProgressNanos > stallThresholdNanos) {
      applyStalled = true;
    }
    if (applyStalled) {
      return List.of();
    }
    quietTurn = false;
    List<ExpireItem> due = new ArrayList<>();
    while (due.size() < max
        && !queue.isEmpty()
        && queue.peek().queuedNanos + shiftNanos - nowNanos <= 0) {
      Deadline d = queue.poll();
      if (deadlines.get(d.name) != d) {
        continue; // ended or granted again since: a newer entry (or none) stands for it
      }
      if (d.dueNanos != d.queuedNanos) {
        // Renewed since it was queued: back in at its new deadline (which may be due too).
        d.queuedNanos = d.dueNanos;
        queue.add(d);
        continue;
      }
      // Proposed now; if its Expire is lost (a dropped reply, a failed proposal) and nothing
      // ends or renews it, it comes due again after the re-propose interval. The Expire's guard
      // makes a repeat harmless.
      d.dueNanos = nowNanos + reproposeAfterNanos - shiftNanos;
      d.queuedNanos = d.dueNanos;
      queue.add(d);
      proposedLeases.add(d.name);
      due.add(
          ExpireItem.newBuilder()
              .setName(d.name)
              .setToken(d.token)
              .setLastRenewRevision(d.lastRenewRevision)
              .build());
    }
    return due;
  }

  /** How many stalls moved the deadlines out since this scheduler was created. */
  public synchronized long stalls() {
    return stalls;
  }

  public synchronized int tracked() {
    return deadlines.size();
  }

  /**
   * Nanoseconds until the lease is due (negative: overdue), if tracked. Once its Expire has been
   * proposed, until it would be proposed again.
   */
  public synchronized OptionalLong remainingNanos(String name, long nowNanos) {
    Deadline d = deadlines.get(name);
    return d == null ? OptionalLong.empty() : OptionalLong.of(d.dueNanos + shiftNanos - nowNanos);
  }

  /** Heap entries, live and stale (for tests of the compaction). */
  synchronized int queued() {
    return queue.size();
  }

  private void extendAll(long byNanos, long nowNanos, long appliedIndex) {
    stalls++;
    shiftNanos += byNanos;
    if (stallLog.size() == STALLS_KEPT) {
      stallLog.removeFirst();
    }
    stallLog.addLast(new Stall(nowNanos, byNanos, appliedIndex));
  }

  /**
   * The deadline this leader keeps for a lease (or, with {@code item.session} set, for the session
   * it is attached to), as a read shows it: how long until this leader expires it, and why that is
   * later than its last renewal plus TTL and grace, if it is. Not tracked when this node does not
   * decide, or no longer (or not yet) tracks that lease with that token.
   *
   * @param wallNowMicros this node's wall clock now: only to date the extensions for people
   */
  public synchronized LeaderDeadline deadline(
      DeadlineQueryItem item, long nowNanos, long wallNowMicros) {
    LeaderDeadline.Builder b = LeaderDeadline.newBuilder();
    if (!active) {
      return b.build();
    }
    long lastRenewRevision;
    long dueNanos;
    boolean proposed;
    if (item.getSession() != 0) {
      SessionDeadline d = sessions.get(item.getSession());
      if (d == null) {
        return b.build();
      }
      lastRenewRevision = d.lastRenewRevision;
      dueNanos = d.dueNanos;
      proposed = proposedSessions.contains(d.id);
    } else {
      Deadline d = deadlines.get(item.getName());
      if (d == null || d.token != item.getToken()) {
        return b.build();
      }
      lastRenewRevision = d.lastRenewRevision;
      dueNanos = d.dueNanos;
      proposed = proposedLeases.contains(d.name);
    }
    b.setTracked(true)
        .setLastRenewRevision(lastRenewRevision)
        .setRemainingMicros(proposed ? 0 : Math.max(0, (dueNanos + shiftNanos - nowNanos) / 1_000));
    boolean carried = lastRenewRevision <= promotedIndex;
    if (carried) {
      b.addExtensions(
          DeadlineExtension.newBuilder()
              .setReason(DeadlineExtension.Reason.LEADER_CHANGE)
              .setAt(wallTime(promotedAtNanos, nowNanos, wallNowMicros))
              .setTerm(promotedTerm));
    }
    for (Stall stall : stallLog) {
      if (carried || stall.appliedIndex() >= lastRenewRevision) {
        b.addExtensions(
            DeadlineExtension.newBuilder()
                .setReason(DeadlineExtension.Reason.STALL)
                .setAt(wallTime(stall.atNanos(), nowNanos, wallNowMicros))
                .setTerm(promotedTerm)
                .setBy(
                    com.google.protobuf.Duration.newBuilder()
                        .setSeconds(stall.byNanos() / 1_000_000_000L)
                        .setNanos((int) (stall.byNanos() % 1_000_000_000L))));
      }
    }
    return b.build();
  }

  private static Timestamp wallTime(long atNanos, long nowNanos, long wallNowMicros) {
    long micros = wallNowMicros - (nowNanos - atNanos) / 1_000;
    return Timestamp.newBuilder()
        .setSeconds(Math.floorDiv(micros, 1_000_000L))
        .setNanos((int) Math.floorMod(micros, 1_000_000L) * 1_000)
        .build();
  }

  private void put(String name, LeaseRecord lease, long nowNanos) {
    if (!proposedLeases.isEmpty()) {
      proposedLeases.remove(name);
    }
    if (lease.getSession() != 0) {
      // It lives with its session: no deadline of its own (a stale one stays in the heap, skipped).
      deadlines.remove(name);
      return;
    }
    // Due one TTL plus the namespace's grace period (as recorded at the grant or renewal) after
    // now.
    long dueNanos = nowNanos + (lease.getTtlMicros() + lease.getGraceMicros()) * 1_000 - shiftNanos;
    Deadline current = deadlines.get(name);
    if (current != null
        && current.token == lease.getToken()
        && dueNanos - current.queuedNanos >= 0) {
      // A renewal: the entry stays where the heap has it, and goes back in when it surfaces.
      current.dueNanos = dueNanos;
      current.lastRenewRevision = lease.getLastRenewRevision();
      return;
    }
    Deadline d = new Deadline(name, lease.getToken(), lease.getLastRenewRevision(), dueNanos);
    deadlines.put(d);
    queue.add(d);
    if (queue.size() > 2 * deadlines.size() + 1024) {
      // Mostly ended leases' leftovers: keep the heap proportional to the live leases.
      queue.clear();
      deadlines.forEach(
          live -> {
            live.queuedNanos = live.dueNanos;
            queue.add(live);
          });
    }
  }
}
