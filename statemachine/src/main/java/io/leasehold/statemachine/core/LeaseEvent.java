package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.LeaseRecord;

/**
 * A change produced by applying one log entry. {@code lease} is the lease after the change, or as
 * it was when it ended (the default instance for a policy change); {@code timeMicros} is the
 * leader-stamped time of the entry; {@code message} is the operator's reason for a revocation or a
 * ban, else empty; {@code previous} is, for an update, the attributes before it (null for other
 * types, and for updates read from history written before it was kept).
 */
public record LeaseEvent(
    Type type,
    long revision,
    String name,
    LeaseRecord lease,
    long timeMicros,
    String message,
    Attributes previous) {
  public LeaseEvent(Type type, long revision, String name, LeaseRecord lease, long timeMicros) {
    this(type, revision, name, lease, timeMicros, "", null);
  }

  public LeaseEvent(
      Type type, long revision, String name, LeaseRecord lease, long timeMicros, String message) {
    this(type, revision, name, lease, timeMicros, message, null);
  }

  public enum Type {
    ACQUIRED,
    /** Not shown to watchers unless asked for: renewals would flood them. */
    RENEWED,
    UPDATED,
    RELEASED,
    EXPIRED,
    /** Ended by an operator's Revoke. */
    REVOKED,
    /** Ended because its holder was banned (an API event of type REVOKED, reason BANNED). */
    BANNED,
    /** A namespace's policy was set or deleted; the name is "namespace/" ("" for the default). */
    POLICY_CHANGED,
    /**
     * Ended by a Transfer (an API event of type RELEASED, reason TRANSFERRED); the grant follows at
     * the same revision.
     */
    TRANSFERRED,
    /** Ended with its session's expiry (an API event of type EXPIRED, reason SESSION_EXPIRED). */
    SESSION_EXPIRED,
    /** Ended with its session's close (an API event of type RELEASED, reason SESSION_CLOSED). */
    SESSION_CLOSED;

    public boolean endsLease() {
      return this == RELEASED
          || this == EXPIRED
          || this == REVOKED
          || this == BANNED
          || this == TRANSFERRED
          || this == SESSION_EXPIRED
          || this == SESSION_CLOSED;
    }

    /**
     * Whether the ending bars the name for the namespace's lock-delay: one the holder may not have
     * noticed (an expiry, a revocation, a ban), not one it asked for (a release, a close, a
     * transfer).
     */
    public boolean setsLockDelay() {
      return this == EXPIRED || this == REVOKED || this == BANNED || this == SESSION_EXPIRED;
    }
  }
}
