package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeaseRecord;
import java.util.OptionalLong;

/** Turns stored records into the API's {@link Lease}. */
public final class LeaseViews {
  private LeaseViews() {}

  /**
   * @param nowMicros the serving node's wall clock, for {@code remaining}; absent inside apply,
   *     which must not depend on any clock but the leader's stamp
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
        .setModRevision(r.getModRevision());
    if (r.hasAttributes()) {
      b.setAttributes(r.getAttributes());
    }
    nowMicros.ifPresent(now -> b.setRemaining(Times.duration(Math.max(0, expiresAt - now))));
    return b.build();
  }

  /** The leader-stamped estimate of when the lease ends; the leader's monotonic ticker decides. */
  public static long expiresAtMicros(LeaseRecord r) {
    return r.getRenewedAtMicros() + r.getTtlMicros();
  }
}
