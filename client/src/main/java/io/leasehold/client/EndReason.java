package io.leasehold.client;

/** Why a lease ended ({@link WatchEvent#reason()}, {@link EndedLease#reason()}). */
public enum EndReason {
  /** Its holder released it. */
  RELEASED,
  /** It was not renewed in time. */
  EXPIRED,
  /** An operator revoked it. */
  REVOKED,
  /** Its holder was banned. */
  BANNED,
  /**
   * It was handed to another holder ({@link Lease#transferTo}); the new lease has a larger token.
   */
  TRANSFERRED,
  /** Its session expired (its client stopped keeping the session alive). */
  SESSION_EXPIRED,
  /** Its session was closed. */
  SESSION_CLOSED,
  /** A reason newer than this SDK. */
  UNKNOWN
}
