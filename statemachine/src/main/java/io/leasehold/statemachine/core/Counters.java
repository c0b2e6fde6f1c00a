package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.RejectReason;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What this replica's apply loop has seen since it started: counts for the metrics of a node. Not
 * replicated and not in snapshots (every replica counts the same entries, but a restart starts
 * again from zero). Written by the apply thread after each commit; read from any thread.
 */
public final class Counters {
  /** A point-in-time copy. {@code lateHeartbeats}: renewals of a lease that had already expired. */
  public record Snapshot(
      long acquired,
      long renewed,
      long released,
      long expired,
      long revoked,
      long banned,
      long lateHeartbeats,
      Map<RejectReason, Long> rejections) {
    public Snapshot {
      rejections = Map.copyOf(rejections);
    }

    public long rejected(RejectReason reason) {
      return rejections.getOrDefault(reason, 0L);
    }

    /** The counts of both, added: a node's over the Raft groups it hosts. */
    public Snapshot plus(Snapshot o) {
      Map<RejectReason, Long> r = new EnumMap<>(RejectReason.class);
      rejections.forEach((reason, n) -> r.merge(reason, n, Long::sum));
      o.rejections.forEach((reason, n) -> r.merge(reason, n, Long::sum));
      return new Snapshot(
          acquired + o.acquired,
          renewed + o.renewed,
          released + o.released,
          expired + o.expired,
          revoked + o.revoked,
          banned + o.banned,
          lateHeartbeats + o.lateHeartbeats,
          r);
    }
  }

  /**
   * Leases expired recently (name to token), to tell a late heartbeat from a stale or wrong token.
   */
  private static final int RECENTLY_EXPIRED = 65_536;

  private final LongAdder[] byType = new LongAdder[LeaseEvent.Type.values().length];
  private final LongAdder lateHeartbeats = new LongAdder();
  private final EnumMap<RejectReason, LongAdder> rejections = new EnumMap<>(RejectReason.class);
  private final Map<String, Long> recentlyExpired =
      new LinkedHashMap<>(1024, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
          return size() > RECENTLY_EXPIRED;
        }
      };

  Counters() {
    for (int i = 0; i < byType.length; i++) {
      byType[i] = new LongAdder();
    }
    for (RejectReason r : RejectReason.values()) {
      if (r != RejectReason.UNRECOGNIZED && r != RejectReason.REJECT_REASON_UNSPECIFIED) {
        rejections.put(r, new LongAdder());
      }
    }
  }

  /** Apply thread, after a commit: {@code n} events of a type. */
  void add(LeaseEvent.Type type, int n) {
    byType[type.ordinal()].add(n);
  }

  /** Apply thread, after a commit: a lease expired. */
  void expired(String name, long token) {
    recentlyExpired.put(name, token);
  }

  void rejected(RejectReason reason, int n) {
    LongAdder a = rejections.get(reason);
    if (a != null) {
      a.add(n);
    }
  }

  void lateHeartbeats(int n) {
    lateHeartbeats.add(n);
  }

  /**
   * Apply thread: whether a renewal of (name, token) that found no lease came after that lease
   * expired.
   */
  boolean expiredRecently(String name, long token) {
    Long t = recentlyExpired.get(name);
    return t != null && t == token;
  }

  public Snapshot snapshot() {
    Map<RejectReason, Long> r = new EnumMap<>(RejectReason.class);
    rejections.forEach((reason, n) -> r.put(reason, n.sum()));
    return new Snapshot(
        sum(LeaseEvent.Type.ACQUIRED),
        sum(LeaseEvent.Type.RENEWED),
        sum(LeaseEvent.Type.RELEASED),
        sum(LeaseEvent.Type.EXPIRED),
        sum(LeaseEvent.Type.REVOKED),
        sum(LeaseEvent.Type.BANNED),
        lateHeartbeats.sum(),
        r);
  }

  private long sum(LeaseEvent.Type t) {
    return byType[t.ordinal()].sum();
  }
}
