package io.leasehold.statemachine.core;

import java.time.Duration;

/**
 * Bounds that every replica applies identically. They are constants, not configuration: a replica
 * with other bounds would apply the same log differently. What operators may change (TTL bounds,
 * quotas, …) is replicated policy ({@link PolicyTerms}); the TTL values here are the built-in
 * policy that applies where no policy was set.
 */
public final class Limits {
  private Limits() {}

  public static final int MAX_NAME_BYTES = 512;
  public static final int MAX_HOLDER_BYTES = 256;
  public static final int MAX_ADDRESS_BYTES = 512;
  public static final int MAX_STATUS_BYTES = 64;
  public static final int MAX_METADATA_ENTRIES = 64;
  public static final int MAX_METADATA_KEY_BYTES = 128;
  public static final int MAX_METADATA_VALUE_BYTES = 4096;

  /** At most this many zones, and statuses, in one filter (Resolve, Watch). */
  public static final int MAX_FILTER_CHOICES = 16;

  public static final int MAX_RENEW_ITEMS = 10_000;

  /** Names one AcquireMany may claim: each takes a token position of its entry. */
  public static final int MAX_ACQUIRE_MANY = 1_000;

  public static final int MAX_LIST_LIMIT = 10_000;

  /**
   * Well above the election timeout, so a leader change alone never expires a lease: the built-in
   * minimum, and the floor below which no policy may go.
   */
  public static final Duration MIN_TTL = Duration.ofSeconds(2);

  public static final Duration MAX_TTL = Duration.ofHours(24);
  public static final Duration DEFAULT_TTL = Duration.ofSeconds(10);

  /** The longest an Acquire may ask its node to wait for a held name (its {@code wait}). */
  public static final Duration MAX_ACQUIRE_WAIT = Duration.ofMinutes(10);

  /**
   * The longest duration a policy may give (TTL, grace, lock-delay): keeps deadlines in nanoseconds
   * far from overflow.
   */
  public static final Duration MAX_POLICY_DURATION = Duration.ofDays(366);

  /** A name pattern's length in characters, and its size once counted repetitions are expanded. */
  public static final int MAX_PATTERN_CHARS = 256;

  public static final int MAX_PATTERN_COST = 2_000;

  /**
   * Ended leases kept per name (and per holder) unless a policy says otherwise, and the most a
   * policy may keep.
   */
  public static final int DEFAULT_HISTORY_LIMIT = 100;

  public static final int MAX_HISTORY_LIMIT = 10_000;
  public static final int MAX_REASON_BYTES = 1024;
  public static final int MAX_NAMESPACE_BYTES = MAX_NAME_BYTES;

  /**
   * The longest a ban may be given for with a duration (a ban without an end lasts until Unban).
   */
  public static final Duration MAX_BAN_DURATION = Duration.ofDays(3660);

  /**
   * The renewal interval suggested to clients: a third of the TTL, as etcd and Consul clients do.
   */
  public static Duration heartbeatFor(Duration ttl) {
    return ttl.dividedBy(3);
  }
}
