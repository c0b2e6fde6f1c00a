package io.leasehold.client;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A lease that ended, from the cluster's bounded history ({@link LeaseholdAdmin#history}).
 *
 * @param name       the leased name
 * @param holder     who held it
 * @param token      its fencing token
 * @param ttl        its TTL
 * @param acquiredAt when it was granted (leader-stamped)
 * @param endedAt    when it ended (leader-stamped)
 * @param renewCount how many times it was renewed
 * @param reason     why it ended: RELEASED, EXPIRED, REVOKED or BANNED ({@link EndReason#UNKNOWN} for a reason newer than this SDK)
 * @param message    for a revocation or a ban, the reason the operator gave
 * @param revision   the revision of the entry that ended it
 */
public record EndedLease(String name, String holder, long token, Duration ttl, Instant acquiredAt, Instant endedAt,
    long renewCount, EndReason reason, Optional<String> message, long revision) {
  /**
   * Checks that every field is given.
   *
   * @param name the leased name
   * @param holder who held it
   * @param token its fencing token
   * @param ttl its TTL
   * @param acquiredAt when it was granted (leader-stamped)
   * @param endedAt when it ended (leader-stamped)
   * @param renewCount how many times it was renewed
   * @param reason why it ended: RELEASED, EXPIRED, REVOKED or BANNED ({@link EndReason#UNKNOWN}
   *     for a reason newer than this SDK)
   * @param message for a revocation or a ban, the reason the operator gave
   * @param revision the revision of the entry that ended it
   */
  public EndedLease {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(acquiredAt, "acquiredAt");
    Objects.requireNonNull(endedAt, "endedAt");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(message, "message");
  }
}
