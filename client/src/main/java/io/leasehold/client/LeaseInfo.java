package io.leasehold.client;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A lease as the cluster stores it, as read by {@link LeaseholdClient#get} or carried by a {@link
 * WatchEvent}. Timestamps are stamped by the leader's wall clock and are informational: only the
 * leader decides expiry.
 *
 * @param name the leased name
 * @param holder who holds it
 * @param token its fencing token
 * @param ttl its TTL
 * @param acquiredAt when it was granted
 * @param renewedAt when it was last renewed
 * @param expiresAt {@code renewedAt + ttl}, an estimate; it stays as stamped when the leader
 *     extends the lease ({@code deadline} says when it ends)
 * @param attributes its address, metadata and status
 * @param renewCount how many times it was renewed
 * @param modRevision the revision of its latest change of any kind
 * @param remaining for reads: {@code expiresAt} minus the serving node's clock
 * @param serverState for reads: ACTIVE, or STALE once its last renewal is older than twice its
 *     heartbeat interval (its holder is probably gone); UNKNOWN in events
 * @param heartbeatInterval the renewal interval the cluster suggested at its last grant or renewal
 * @param gracePeriod the time the cluster waits after {@code expiresAt} before it expires the lease
 * @param session the session it lives with (its TTL and renewals are the session's); 0: its own TTL
 * @param deadline for reads: when the cluster expires the lease unless it is renewed first, as
 *     {@code deadlineSource} says; empty in events and replies
 * @param deadlineRemaining for reads: {@code deadline} minus the serving node's clock, never
 *     negative
 * @param deadlineSource LEADER: the deadline the leader's expiry acts on; ESTIMATE: {@code
 *     expiresAt} plus the grace period (the leader may have extended it); UNKNOWN: no deadline
 *     (events, replies, an older server)
 * @param extensions with a LEADER deadline: why it is later than {@code expiresAt} plus the grace
 *     period (a leader change, a stall), oldest first; empty when it is not
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
    long session,
    Optional<Instant> deadline,
    Optional<Duration> deadlineRemaining,
    DeadlineSource deadlineSource,
    List<DeadlineExtension> extensions) {

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
   * @param deadline for reads: when the cluster expires the lease unless it is renewed first
   * @param deadlineRemaining for reads: {@code deadline} minus the serving node's clock
   * @param deadlineSource where {@code deadline} comes from
   * @param extensions why the leader's deadline is later than {@code expiresAt} plus the grace
   *     period
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
    Objects.requireNonNull(deadline, "deadline");
    Objects.requireNonNull(deadlineRemaining, "deadlineRemaining");
    Objects.requireNonNull(deadlineSource, "deadlineSource");
    extensions = List.copyOf(extensions);
  }

  /**
   * A lease without a deadline (as events and replies carry it, and as SDKs before deadlines made
   * it).
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
   * @param serverState for reads: how the serving node judged it
   * @param heartbeatInterval the renewal interval the cluster suggested
   * @param gracePeriod the time the cluster waits after {@code expiresAt}
   * @param session the session it lives with; 0: its own TTL
   */
  public LeaseInfo(
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
    this(
        name,
        holder,
        token,
        ttl,
        acquiredAt,
        renewedAt,
        expiresAt,
        attributes,
        renewCount,
        modRevision,
        remaining,
        serverState,
        heartbeatInterval,
        gracePeriod,
        session,
        Optional.empty(),
        Optional.empty(),
        DeadlineSource.UNKNOWN,
        List.of());
  }

  /**
   * Whether the leader extended the lease past its last renewal plus TTL and grace period.
   *
   * @return whether {@link #extensions()} has any
   */
  public boolean extended() {
    return !extensions.isEmpty();
  }
}
