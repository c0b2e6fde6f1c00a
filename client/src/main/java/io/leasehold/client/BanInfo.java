package io.leasehold.client;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A banned holder ({@link LeaseholdAdmin#ban}, {@link LeaseholdAdmin#bans}).
 *
 * @param holder who is banned
 * @param reason the operator's reason
 * @param bannedAt when the ban was applied (leader-stamped)
 * @param until when a timed ban ends (an estimate: the leader lifts it); absent for a ban that
 *     holds until lifted
 * @param revision the revision of the ban
 * @param leasesEnded how many live leases the ban ended
 */
public record BanInfo(
    String holder,
    String reason,
    Instant bannedAt,
    Optional<Instant> until,
    long revision,
    long leasesEnded) {
  /**
   * Checks that every field is given.
   *
   * @param holder who is banned
   * @param reason the operator's reason
   * @param bannedAt when the ban was applied (leader-stamped)
   * @param until when a timed ban ends (an estimate: the leader lifts it); absent for a ban that
   *     holds until lifted
   * @param revision the revision of the ban
   * @param leasesEnded how many live leases the ban ended
   */
  public BanInfo {
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(bannedAt, "bannedAt");
    Objects.requireNonNull(until, "until");
  }
}
