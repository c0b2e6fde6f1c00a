package io.leasehold.client;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The cluster's policy refused an acquisition or a renewal: a TTL outside the namespace's bounds, a
 * banned holder, a name the namespace's pattern does not allow, a lock-delay after the name's last
 * lease expired or was revoked, or a quota.
 *
 * @param reason why; {@link RejectReason#UNKNOWN} for a reason newer than this SDK
 * @param reasonNumber the reason's wire number, meaningful even when the reason is unrecognized
 * @param message the cluster's explanation
 * @param minTtl the smallest allowed TTL, for TTL_OUT_OF_RANGE
 * @param maxTtl the largest allowed TTL, for TTL_OUT_OF_RANGE
 * @param retryAfter for LOCK_DELAY the delay that remains; for BANNED the time until a timed ban
 *     ends
 * @param limit the quota, for HOLDER_QUOTA and NAMESPACE_QUOTA
 * @param namePattern the pattern the rest of the name must match, for NAME_NOT_ALLOWED
 */
public record Rejection(
    RejectReason reason,
    int reasonNumber,
    String message,
    Optional<Duration> minTtl,
    Optional<Duration> maxTtl,
    Optional<Duration> retryAfter,
    OptionalLong limit,
    Optional<String> namePattern) {
  /**
   * Checks that every field is given.
   *
   * @param reason why; {@link RejectReason#UNKNOWN} for a reason newer than this SDK
   * @param reasonNumber the reason's wire number, meaningful even when the reason is unrecognized
   * @param message the cluster's explanation
   * @param minTtl the smallest allowed TTL, for TTL_OUT_OF_RANGE
   * @param maxTtl the largest allowed TTL, for TTL_OUT_OF_RANGE
   * @param retryAfter for LOCK_DELAY the delay that remains; for BANNED the time until a timed ban
   *     ends
   * @param limit the quota, for HOLDER_QUOTA and NAMESPACE_QUOTA
   * @param namePattern the pattern the rest of the name must match, for NAME_NOT_ALLOWED
   */
  public Rejection {
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(minTtl, "minTtl");
    Objects.requireNonNull(maxTtl, "maxTtl");
    Objects.requireNonNull(retryAfter, "retryAfter");
    Objects.requireNonNull(limit, "limit");
    Objects.requireNonNull(namePattern, "namePattern");
  }
}
