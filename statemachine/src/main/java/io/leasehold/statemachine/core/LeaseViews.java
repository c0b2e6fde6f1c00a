package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.DeadlineSource;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.LeaseState;
import io.leasehold.proto.v1.Session;
import io.leasehold.proto.v1.StoredSession;
import java.util.OptionalLong;

/** Turns stored records into the API's {@link Lease}. */
public final class LeaseViews {
  private LeaseViews() {}

  /**
   * @param nowMicros the serving node's wall clock, for {@code remaining} and {@code state}; absent
   *     inside apply, which must not depend on any clock but the leader's stamp
   */
  public static Lease toLease(String name, LeaseRecord r, OptionalLong nowMicros) {
    return toLease(name, r, null, nowMicros);
  }

  /**
   * @param session the session the lease is attached to, if it is and the caller has it: its TTL,
   *     renewal and heartbeat are then the lease's
   */
  static Lease toLease(String name, LeaseRecord r, StoredSession session, OptionalLong nowMicros) {
    boolean withSession = session != null && r.getSession() != 0;
    long ttl = withSession ? session.getTtlMicros() : r.getTtlMicros();
    long renewedAt =
        withSession
            ? Math.max(r.getRenewedAtMicros(), session.getRenewedAtMicros())
            : r.getRenewedAtMicros();
    long expiresAt = renewedAt + ttl;
    long heartbeat = withSession ? heartbeatMicros(session) : heartbeatMicros(r);
    // The grace period is the lease's own; one attached to a session ends with the session.
    long grace = r.getSession() != 0 ? 0 : r.getGraceMicros();
    Lease.Builder b =
        Lease.newBuilder()
            .setName(name)
            .setHolder(r.getHolder())
            .setToken(r.getToken())
            .setTtl(Times.duration(ttl))
            .setAcquiredAt(Times.timestamp(r.getAcquiredAtMicros()))
            .setRenewedAt(Times.timestamp(renewedAt))
            .setExpiresAt(Times.timestamp(expiresAt))
            .setLastRenewRevision(
                withSession
                    ? Math.max(r.getLastRenewRevision(), session.getLastRenewRevision())
                    : r.getLastRenewRevision())
            .setRenewCount(r.getRenewCount())
            .setModRevision(r.getModRevision())
            .setHeartbeatInterval(Times.duration(heartbeat))
            .setSession(r.getSession());
    if (r.hasAttributes()) {
      b.setAttributes(r.getAttributes());
    }
    if (grace > 0) {
      b.setGracePeriod(Times.duration(grace));
    }
    if (nowMicros.isPresent()) {
      long now = nowMicros.getAsLong();
      b.setRemaining(Times.duration(Math.max(0, expiresAt - now)));
      b.setState(state(now, renewedAt, expiresAt, heartbeat, grace));
      // What the stored record tells: the server replaces it with the leader's own deadline when
      // it can ask the leader (only the leader knows whether it extended the lease).
      b.setDeadline(Times.timestamp(expiresAt + grace))
          .setDeadlineRemaining(Times.duration(Math.max(0, expiresAt + grace - now)))
          .setDeadlineSource(DeadlineSource.DEADLINE_SOURCE_ESTIMATE);
    }
    return b.build();
  }

  /**
   * What an operator sees, by the serving node's clock: EXPIRING past the estimated end while the
   * grace period runs, STALE when renewals stopped coming (over two heartbeats), else ACTIVE.
   */
  private static LeaseState state(
      long now, long renewedAt, long expiresAt, long heartbeat, long grace) {
    if (grace > 0 && now > expiresAt && now <= expiresAt + grace) {
      return LeaseState.EXPIRING;
    }
    return now - renewedAt > 2 * heartbeat ? LeaseState.STALE : LeaseState.ACTIVE;
  }

  /** The API form of a session with {@code leases} attached. */
  static Session toSession(long id, StoredSession s, long leases, OptionalLong nowMicros) {
    long expiresAt = expiresAtMicros(s);
    Session.Builder b =
        Session.newBuilder()
            .setId(id)
            .setHolder(s.getHolder())
            .setTtl(Times.duration(s.getTtlMicros()))
            .setCreatedAt(Times.timestamp(s.getCreatedAtMicros()))
            .setRenewedAt(Times.timestamp(s.getRenewedAtMicros()))
            .setExpiresAt(Times.timestamp(expiresAt))
            .setLastRenewRevision(s.getLastRenewRevision())
            .setRenewCount(s.getRenewCount())
            .setLeases(leases)
            .setHeartbeatInterval(Times.duration(heartbeatMicros(s)));
    if (nowMicros.isPresent()) {
      long now = nowMicros.getAsLong();
      b.setRemaining(Times.duration(Math.max(0, expiresAt - now)));
      b.setState(state(now, s.getRenewedAtMicros(), expiresAt, heartbeatMicros(s), 0));
      b.setDeadline(Times.timestamp(expiresAt))
          .setDeadlineRemaining(Times.duration(Math.max(0, expiresAt - now)))
          .setDeadlineSource(DeadlineSource.DEADLINE_SOURCE_ESTIMATE);
    }
    return b.build();
  }

  static long heartbeatMicros(StoredSession s) {
    return s.getHeartbeatMicros() > 0 ? s.getHeartbeatMicros() : s.getTtlMicros() / 3;
  }

  static long expiresAtMicros(StoredSession s) {
    return s.getRenewedAtMicros() + s.getTtlMicros();
  }

  /**
   * The renewal interval suggested for a lease: its policy's, else a third of its TTL (as etcd and
   * Consul clients do).
   */
  public static long heartbeatMicros(LeaseRecord r) {
    return r.getHeartbeatMicros() > 0 ? r.getHeartbeatMicros() : r.getTtlMicros() / 3;
  }

  /** The leader-stamped estimate of when the lease ends; the leader's monotonic ticker decides. */
  public static long expiresAtMicros(LeaseRecord r) {
    return r.getRenewedAtMicros() + r.getTtlMicros();
  }

  /**
   * When the leader expires the lease unless it is renewed or the leader extends it: the estimate
   * plus the grace period (a lease attached to a session has none: it ends with it).
   */
  public static long deadlineMicros(LeaseRecord r) {
    return expiresAtMicros(r) + (r.getSession() != 0 ? 0 : r.getGraceMicros());
  }
}
