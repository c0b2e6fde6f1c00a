package io.leasehold.statemachine.core;

import java.time.Duration;

/**
 * Bounds that every replica applies identically. They are constants, not configuration: a
 * replica with other bounds would apply the same log differently. Replicated per-namespace
 * policy replaces the TTL bounds later.
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
  public static final int MAX_RENEW_ITEMS = 10_000;
  public static final int MAX_LIST_LIMIT = 10_000;

  /** Well above the election timeout, so a leader change alone never expires a lease. */
  public static final Duration MIN_TTL = Duration.ofSeconds(2);
  public static final Duration MAX_TTL = Duration.ofHours(24);
  public static final Duration DEFAULT_TTL = Duration.ofSeconds(10);

  /** The renewal interval suggested to clients: a third of the TTL, as etcd and Consul clients do. */
  public static Duration heartbeatFor(Duration ttl) {
    return ttl.dividedBy(3);
  }
}
