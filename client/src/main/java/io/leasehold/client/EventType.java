package io.leasehold.client;

/** What a {@link WatchEvent} reports. */
public enum EventType {
  /** A lease was granted. */
  ACQUIRED,
  /**
   * A lease was renewed (live only, and only when asked for: {@link
   * WatchOptions#includeRenewals()}).
   */
  RENEWED,
  /** A lease's attributes changed. */
  UPDATED,
  /** A lease was released by its holder. */
  RELEASED,
  /** A lease expired. */
  EXPIRED,
  /** A lease was ended by an operator (reason REVOKED) or by a ban (reason BANNED). */
  REVOKED,
  /** A namespace's policy was set or deleted; delivered only to watchers that ask for it. */
  POLICY_CHANGED,
  /** A type newer than this SDK. */
  UNKNOWN
}
