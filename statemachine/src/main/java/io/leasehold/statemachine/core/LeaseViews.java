package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeaseRecord;
import io.leasehold.proto.v1.LeaseState;
import java.util.OptionalLong;

/** Turns stored records into the API's {@link Lease}. */
public final class LeaseViews {
  private LeaseViews() {}

  /**
   * @param nowMicros the serving node's wall clock, for {@code remaining} and {@code state}; absent
   *     inside apply, which must not depend on any clock but the leader's stamp
   */
  public static Lease toLease(String name, LeaseRecord r, OptionalLong nowMicros) {
    long expiresAt = expiresAtMicros(r);
    Lease.Builder b = Lease.newBuilder()
        .setName(name)
        .setHolder(r.getHolder())
        .setToken(r.getToken())
        .setTtl(Times.duration(r.getTtlMicros()))
        .setAcquiredAt(Times.timestamp(r.getAcquiredAtMicros()))
        .setRenewedAt(Times.timestamp(r.getRenewedAtMicros()))
        .setExpiresAt(Times.timestamp(expiresAt))
        .setLastRenewRevision(r.getLastRenewRevision())
        .setRenewCount(r.getRenewCount())
        .setModRevision(r.getModRevision())
        .setHeartbeatInterval(Times.duration(heartbeatMicros(r)));
    if (r.hasAttributes()) {
      b.setAttributes(r.getAttributes());
    }
    if (r.getGraceMicros() > 0) {
      b.setGracePeriod(Times.duration(r.getGraceMicros()));
    }
    if (nowMicros.isPresent()) {
      long now = nowMicros.getAsLong();
      b.setRemaining(Times.duration(Math.max(0, expiresAt - now)));
      b.setState(now - r.getRenewedAtMicros() > 2 * heartbeatMicros(r) ? LeaseState.STALE : LeaseState.ACTIVE);
    }
    return b.build();
  }

  /** The renewal interval suggested for a lease: its policy's, else a third of its TTL (as etcd and Consul clients do). */
  public static long heartbeatMicros(LeaseRecord r) {
    return r.getHeartbeatMicros() > 0 ? r.getHeartbeatMicros() : r.getTtlMicros() / 3;
  }

  /** The leader-stamped estimate of when the lease ends; the leader's monotonic ticker decides. */
  public static long expiresAtMicros(LeaseRecord r) {
    return r.getRenewedAtMicros() + r.getTtlMicros();
  }
}
