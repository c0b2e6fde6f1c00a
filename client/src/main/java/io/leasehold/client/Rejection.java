package io.leasehold.client;

import io.leasehold.proto.v1.RejectReason;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The cluster's policy refused an acquisition (for instance a TTL outside the allowed bounds).
 *
 * @param reason       the wire reason; {@link RejectReason#UNRECOGNIZED} for a reason newer than this SDK
 * @param reasonNumber the reason's wire number, meaningful even when the reason is unrecognized
 * @param message      the cluster's explanation
 * @param minTtl       the smallest allowed TTL, for TTL rejections
 * @param maxTtl       the largest allowed TTL, for TTL rejections
 */
public record Rejection(RejectReason reason, int reasonNumber, String message, Optional<Duration> minTtl, Optional<Duration> maxTtl) {
  public Rejection {
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(minTtl, "minTtl");
    Objects.requireNonNull(maxTtl, "maxTtl");
  }
}
