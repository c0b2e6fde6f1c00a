package io.leasehold.client;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One renewal of a lease by its fencing token ({@link LeaseholdClient#renew(String, long)}), as the
 * cluster answered it.
 *
 * @param name the lease's name
 * @param token its fencing token (unchanged by a renewal)
 * @param ttl the TTL it was renewed for
 * @param expiresAt the leader-stamped estimate of the lease's new end
 * @param heartbeatInterval how often the cluster asks for renewals, if it said
 * @param deadline when the leader expires the lease unless it is renewed again: expiresAt plus the
 *     namespace's grace period (expiresAt from servers that predate deadlines). The leader never
 *     acts sooner.
 */
public record Renewal(
    String name,
    long token,
    Duration ttl,
    Instant expiresAt,
    Optional<Duration> heartbeatInterval,
    Instant deadline) {
  /** Checks that every field is given. */
  public Renewal {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(expiresAt, "expiresAt");
    Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
    Objects.requireNonNull(deadline, "deadline");
  }

  /**
   * A renewal whose deadline is not known apart from its estimated end.
   *
   * @param name the lease's name
   * @param token its fencing token
   * @param ttl the TTL it was renewed for
   * @param expiresAt the leader-stamped estimate of the lease's new end, also taken as its deadline
   * @param heartbeatInterval how often the cluster asks for renewals, if it said
   */
  public Renewal(
      String name,
      long token,
      Duration ttl,
      Instant expiresAt,
      Optional<Duration> heartbeatInterval) {
    this(name, token, ttl, expiresAt, heartbeatInterval, expiresAt);
  }
}
