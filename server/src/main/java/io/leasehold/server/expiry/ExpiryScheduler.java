package io.leasehold.server.expiry;

import io.leasehold.proto.v1.ExpireItem;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.statemachine.core.LeaseEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The leader's lease deadlines on its monotonic clock (TTL plus the lease's grace period), and
 * the decision of what has expired.
 * Pure: every method takes the time, so tests drive it with a fake clock.
 *
 * <p>Lifecycle (after etcd's lessor): {@link #promote} when this node becomes leader,
 * {@link #demote} when it stops; only a promoted scheduler tracks or expires anything.
 */
public final class ExpiryScheduler {
  private final long tickNanos;
  private final long stallThresholdNanos;
  private final long reproposeAfterNanos;
  private final Map<String, Deadline> deadlines = new HashMap<>();
  private boolean active;
  private long lastTickNanos;
  private long lastAppliedIndex = -1;
  private long lastApplyProgressNanos;
  private boolean applyStalled;
  private long stalls;

  /** A tracked lease: what an Expire must carry, and when it is due. */
  private static final class Deadline {
    final long token;
    final long lastRenewRevision;
    long dueNanos;
    long proposedAtNanos;
    boolean proposed;

    Deadline(long token, long lastRenewRevision, long dueNanos) {
      this.token = token;
      this.lastRenewRevision = lastRenewRevision;
      this.dueNanos = dueNanos;
    }
  }

  public ExpiryScheduler(long tickNanos, long stallThresholdNanos) {
    this.tickNanos = tickNanos;
    this.stallThresholdNanos = stallThresholdNanos;
    // An Expire whose reply was lost is proposed again after this long; the guard makes repeats harmless.
    this.reproposeAfterNanos = Math.max(tickNanos * 10, 1_000_000_000L);
  }

  /**
   * Becomes the deciding leader. Every lease then gets a fresh full TTL (via {@link #track}),
   * because a renewal may have reached the old leader just before it died.
   */
  public synchronized void promote(long nowNanos) {
    deadlines.clear();
    active = true;
    lastTickNanos = nowNanos;
    lastApplyProgressNanos = nowNanos;
    lastAppliedIndex = -1;
    applyStalled = false;
  }

  /** Adds a lease found in the state when promoted, unless an applied event already tracks it. */
  public synchronized void track(String name, LeaseRecord lease, long nowNanos) {
    if (active) {
      deadlines.putIfAbsent(name, deadline(lease, nowNanos));
    }
  }

  /** Stops deciding and forgets every deadline: the next leader starts from full TTLs. */
  public synchronized void demote() {
    active = false;
    deadlines.clear();
  }

  public synchronized boolean isActive() {
    return active;
  }

  /** Follows an applied change: a grant or renewal restarts the TTL from now; an ending forgets the lease. */
  public synchronized void onEvent(LeaseEvent event, long nowNanos) {
    if (!active) {
      return;
    }
    switch (event.type()) {
      case ACQUIRED, RENEWED -> deadlines.put(event.name(), deadline(event.lease(), nowNanos));
      case RELEASED, EXPIRED, REVOKED, BANNED -> {
        Deadline d = deadlines.get(event.name());
        if (d != null && d.token == event.lease().getToken()) {
          deadlines.remove(event.name());
        }
      }
      case UPDATED, POLICY_CHANGED -> { }
    }
  }

  /**
   * One turn of the ticker: returns the leases to expire now (at most {@code max}).
   *
   * <p>A stall does not punish clients. If this loop ran late (GC, an overloaded machine) or the
   * apply loop stopped making progress while entries were waiting, renewals may be queued that
   * this leader has not seen; so the stall is treated like a leader change: every deadline moves
   * out by its length and nothing expires in that turn.
   *
   * @param appliedIndex the state machine's applied index now
   * @param commitIndex the log's commit index now
   */
  public synchronized List<ExpireItem> tick(long nowNanos, long appliedIndex, long commitIndex, int max) {
    if (!active) {
      return List.of();
    }
    long gap = nowNanos - lastTickNanos;
    lastTickNanos = nowNanos;
    if (gap > tickNanos + stallThresholdNanos) {
      extendAll(gap - tickNanos);
      return List.of();
    }
    if (appliedIndex != lastAppliedIndex || appliedIndex >= commitIndex) {
      if (applyStalled) {
        // The apply loop moved again: give every lease back the time it was stuck.
        extendAll(nowNanos - lastApplyProgressNanos);
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
    List<ExpireItem> due = new ArrayList<>();
    for (Map.Entry<String, Deadline> e : deadlines.entrySet()) {
      Deadline d = e.getValue();
      if (d.dueNanos - nowNanos > 0) {
        continue;
      }
      if (d.proposed && nowNanos - d.proposedAtNanos < reproposeAfterNanos) {
        continue;
      }
      d.proposed = true;
      d.proposedAtNanos = nowNanos;
      due.add(ExpireItem.newBuilder().setName(e.getKey()).setToken(d.token).setLastRenewRevision(d.lastRenewRevision).build());
      if (due.size() == max) {
        break;
      }
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

  /** Nanoseconds until the lease is due (negative: overdue), if tracked. */
  public synchronized java.util.OptionalLong remainingNanos(String name, long nowNanos) {
    Deadline d = deadlines.get(name);
    return d == null ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(d.dueNanos - nowNanos);
  }

  private void extendAll(long byNanos) {
    stalls++;
    for (Deadline d : deadlines.values()) {
      d.dueNanos += byNanos;
    }
  }

  /** Due one TTL plus the namespace's grace period (as recorded at the grant or renewal) after now. */
  private static Deadline deadline(LeaseRecord lease, long nowNanos) {
    return new Deadline(lease.getToken(), lease.getLastRenewRevision(),
        nowNanos + (lease.getTtlMicros() + lease.getGraceMicros()) * 1_000);
  }
}
