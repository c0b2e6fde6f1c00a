package io.leasehold.client;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One renewal of a lease by its fencing token ({@link LeaseholdClient#renew(String, long)}), as
 * the cluster answered it.
 *
 * @param name              the lease's name
 * @param token             its fencing token (unchanged by a renewal)
 * @param ttl               the TTL it was renewed for
 * @param expiresAt         the leader-stamped estimate of the lease's new end
 * @param heartbeatInterval how often the cluster asks for renewals, if it said
 */
public record Renewal(String name, long token, Duration ttl, Instant expiresAt, Optional<Duration> heartbeatInterval) {
  /**
   * Checks that every field is given.
   *
   * @param name the lease's name
   * @param token its fencing token
   * @param ttl the TTL it was renewed for
   * @param expiresAt the leader-stamped estimate of the lease's new end
   * @param heartbeatInterval how often the cluster asks for renewals, if it said
   */
  public Renewal {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(expiresAt, "expiresAt");
    Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
  }
}
