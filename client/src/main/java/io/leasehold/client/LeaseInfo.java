package io.leasehold.client;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A lease as the cluster stores it, as read by {@link LeaseholdClient#get} or carried by a
 * {@link WatchEvent}. Timestamps are stamped by the leader's wall clock and are informational:
 * only the leader decides expiry.
 *
 * @param name        the leased name
 * @param holder      who holds it
 * @param token       its fencing token
 * @param ttl         its TTL
 * @param acquiredAt  when it was granted
 * @param renewedAt   when it was last renewed
 * @param expiresAt   {@code renewedAt + ttl}, an estimate
 * @param attributes  its address, metadata and status
 * @param renewCount  how many times it was renewed
 * @param modRevision the revision of its latest change of any kind
 * @param remaining   for reads: {@code expiresAt} minus the serving node's clock
 * @param serverState for reads: ACTIVE, or STALE once its last renewal is older than twice its
 *                    heartbeat interval (its holder is probably gone); UNKNOWN in events
 * @param heartbeatInterval the renewal interval the cluster suggested at its last grant or renewal
 * @param gracePeriod the time the cluster waits after {@code expiresAt} before it expires the lease
 * @param session     the session it lives with (its TTL and renewals are the session's); 0: its own TTL
 */
public record LeaseInfo(
    String name,
    String holder,
    long token,
    Duration ttl,
    Instant acquiredAt,
    Instant renewedAt,
    Instant expiresAt,
    LeaseAttributes attributes,
    long renewCount,
    long modRevision,
    Optional<Duration> remaining,
    ServerLeaseState serverState,
    Optional<Duration> heartbeatInterval,
    Optional<Duration> gracePeriod,
    long session) {

  /**
   * Checks that every field is given.
   *
   * @param name the leased name
   * @param holder who holds it
   * @param token its fencing token
   * @param ttl its TTL
   * @param acquiredAt when it was granted
   * @param renewedAt when it was last renewed
   * @param expiresAt {@code renewedAt + ttl}, an estimate
   * @param attributes its address, metadata and status
   * @param renewCount how many times it was renewed
   * @param modRevision the revision of its latest change of any kind
   * @param remaining for reads: {@code expiresAt} minus the serving node's clock
   * @param serverState for reads: ACTIVE, or STALE once its last renewal is older than twice its
   *     heartbeat interval (its holder is probably gone); UNKNOWN in events
   * @param heartbeatInterval the renewal interval the cluster suggested at its last grant or
   *     renewal
   * @param gracePeriod the time the cluster waits after {@code expiresAt} before it expires the
   *     lease
   * @param session the session it lives with; 0: its own TTL
   */
  public LeaseInfo {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(acquiredAt, "acquiredAt");
    Objects.requireNonNull(renewedAt, "renewedAt");
    Objects.requireNonNull(expiresAt, "expiresAt");
    Objects.requireNonNull(attributes, "attributes");
    Objects.requireNonNull(remaining, "remaining");
    Objects.requireNonNull(serverState, "serverState");
    Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
    Objects.requireNonNull(gracePeriod, "gracePeriod");
  }
}
