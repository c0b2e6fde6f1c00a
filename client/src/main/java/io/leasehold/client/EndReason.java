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
  /** A reason newer than this SDK. */
  UNKNOWN
}
