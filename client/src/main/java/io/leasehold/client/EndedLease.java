package io.leasehold.client;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A lease that ended, from the cluster's bounded history ({@link LeaseholdAdmin#history}).
 *
 * @param name the leased name
 * @param holder who held it
 * @param token its fencing token
 * @param ttl its TTL
 * @param acquiredAt when it was granted (leader-stamped)
 * @param endedAt when it ended (leader-stamped)
 * @param renewCount how many times it was renewed
 * @param reason why it ended ({@link EndReason#UNKNOWN} for a reason newer than this SDK)
 * @param message for a revocation or a ban, the reason the operator gave; for a transfer, "to " and
 *     the new holder; for a session's end, "session " and its id
 * @param revision the revision of the entry that ended it
 * @param session the session it was attached to; 0: none
 */
public record EndedLease(
    String name,
    String holder,
    long token,
    Duration ttl,
    Instant acquiredAt,
    Instant endedAt,
    long renewCount,
    EndReason reason,
    Optional<String> message,
    long revision,
    long session) {
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
   * @param reason why it ended ({@link EndReason#UNKNOWN} for a reason newer than this SDK)
   * @param message for a revocation or a ban, the reason the operator gave; for a transfer, "to "
   *     and the new holder; for a session's end, "session " and its id
   * @param revision the revision of the entry that ended it
   * @param session the session it was attached to; 0: none
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
