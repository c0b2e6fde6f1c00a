package io.leasehold.shedlock;

import io.leasehold.client.Rejection;
import java.time.Duration;
import java.util.Objects;

/**
 * The TTLs a namespace allows. Starts at the cluster's floor and the built-in maximum, and is
 * narrowed to what a TTL_OUT_OF_RANGE rejection reports, so one refusal teaches the provider the
 * namespace's policy without an admin read.
 */
record TtlBounds(Duration min, Duration max) {
  /** No policy may set a minimum TTL below this (a lease must outlast a leader election). */
  static final Duration CLUSTER_FLOOR = Duration.ofSeconds(2);

  static final TtlBounds BUILT_IN = new TtlBounds(CLUSTER_FLOOR, Duration.ofHours(24));

  TtlBounds {
    Objects.requireNonNull(min, "min");
    Objects.requireNonNull(max, "max");
  }

  /** The TTL nearest to {@code wanted} that these bounds allow. */
  Duration clamp(Duration wanted) {
    if (wanted.compareTo(min) < 0) {
      return min;
    }
    return wanted.compareTo(max) > 0 ? max : wanted;
  }

  boolean allows(Duration ttl) {
    return ttl.compareTo(min) >= 0 && ttl.compareTo(max) <= 0;
  }

  /** These bounds with what the rejection says applies in place of what it leaves out. */
  TtlBounds learnedFrom(Rejection rejection) {
    return new TtlBounds(rejection.minTtl().orElse(min), rejection.maxTtl().orElse(max));
  }
}
