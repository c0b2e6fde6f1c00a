package io.leasehold.client;

/** Why the cluster's policy refused an acquisition or a renewal ({@link Rejection#reason()}). */
public enum RejectReason {
  /**
   * The TTL is outside the namespace's bounds ({@link Rejection#minTtl()}, {@link
   * Rejection#maxTtl()}).
   */
  TTL_OUT_OF_RANGE,
  /** The holder is banned; {@link Rejection#retryAfter()} is set for a timed ban. */
  BANNED,
  /**
   * The rest of the name does not match the namespace's pattern ({@link Rejection#namePattern()}).
   */
  NAME_NOT_ALLOWED,
  /**
   * The name's last lease expired or was revoked less than the lock-delay ago; retry after {@link
   * Rejection#retryAfter()}.
   */
  LOCK_DELAY,
  /**
   * The holder already holds as many leases as the namespace allows ({@link Rejection#limit()}).
   */
  HOLDER_QUOTA,
  /** The namespace already holds as many leases as it allows ({@link Rejection#limit()}). */
  NAMESPACE_QUOTA,
  /** The session named does not exist (it expired or was closed) or belongs to another holder. */
  NO_SESSION,
  /** A reason newer than this SDK ({@link Rejection#reasonNumber()} has its wire number). */
  UNKNOWN
}
