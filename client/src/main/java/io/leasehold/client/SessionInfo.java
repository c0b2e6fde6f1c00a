package io.leasehold.client;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A session as the cluster stores it ({@link LeaseholdAdmin#sessions}): one TTL and one keep-alive
 * for every lease attached to it. Timestamps are stamped by the leader's wall clock and are
 * informational: only the leader decides expiry.
 *
 * @param id its id, from the log position that created it
 * @param holder whose session it is
 * @param ttl its TTL
 * @param createdAt when it was created
 * @param renewedAt when it was last kept alive
 * @param expiresAt {@code renewedAt + ttl}, an estimate
 * @param renewCount how many times it was kept alive
 * @param leases leases attached to it (counted by {@link LeaseholdAdmin#session}; 0 in lists)
 * @param remaining {@code expiresAt} minus the serving node's clock
 * @param serverState ACTIVE, or STALE once its last keep-alive is older than twice its heartbeat
 *     interval
 * @param heartbeatInterval the keep-alive interval the cluster suggests
 * @param deadline when the cluster expires the session unless it is kept alive first, as {@code
 *     deadlineSource} says (see {@link LeaseInfo#deadline()})
 * @param deadlineRemaining {@code deadline} minus the serving node's clock, never negative
 * @param deadlineSource LEADER: the deadline the leader's expiry acts on; ESTIMATE: {@code
 *     expiresAt}
 * @param extensions with a LEADER deadline: why it is later than {@code expiresAt}, oldest first
 */
public record SessionInfo(
    long id,
    String holder,
    Duration ttl,
    Instant createdAt,
    Instant renewedAt,
    Instant expiresAt,
    long renewCount,
    long leases,
    Optional<Duration> remaining,
    ServerLeaseState serverState,
    Duration heartbeatInterval,
    Optional<Instant> deadline,
    Optional<Duration> deadlineRemaining,
    DeadlineSource deadlineSource,
    List<DeadlineExtension> extensions) {
  /**
   * Checks that every field is given.
   *
   * @param id its id, from the log position that created it
   * @param holder whose session it is
   * @param ttl its TTL
   * @param createdAt when it was created
   * @param renewedAt when it was last kept alive
   * @param expiresAt {@code renewedAt + ttl}, an estimate
   * @param renewCount how many times it was kept alive
   * @param leases leases attached to it (counted by {@link LeaseholdAdmin#session}; 0 in lists)
   * @param remaining {@code expiresAt} minus the serving node's clock
   * @param serverState ACTIVE, or STALE once its last keep-alive is older than twice its heartbeat
   *     interval
   * @param heartbeatInterval the keep-alive interval the cluster suggests
   * @param deadline when the cluster expires the session unless it is kept alive first
   * @param deadlineRemaining {@code deadline} minus the serving node's clock
   * @param deadlineSource where {@code deadline} comes from
   * @param extensions why the leader's deadline is later than {@code expiresAt}
   */
  public SessionInfo {
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(renewedAt, "renewedAt");
    Objects.requireNonNull(expiresAt, "expiresAt");
    Objects.requireNonNull(remaining, "remaining");
    Objects.requireNonNull(serverState, "serverState");
    Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
    Objects.requireNonNull(deadline, "deadline");
    Objects.requireNonNull(deadlineRemaining, "deadlineRemaining");
    Objects.requireNonNull(deadlineSource, "deadlineSource");
    extensions = List.copyOf(extensions);
  }

  /**
   * A session without a deadline (as SDKs before deadlines made it).
   *
   * @param id its id, from the log position that created it
   * @param holder whose session it is
   * @param ttl its TTL
   * @param createdAt when it was created
   * @param renewedAt when it was last kept alive
   * @param expiresAt {@code renewedAt + ttl}, an estimate
   * @param renewCount how many times it was kept alive
   * @param leases leases attached to it
   * @param remaining {@code expiresAt} minus the serving node's clock
   * @param serverState how the serving node judged it
   * @param heartbeatInterval the keep-alive interval the cluster suggests
   */
  public SessionInfo(
      long id,
      String holder,
      Duration ttl,
      Instant createdAt,
      Instant renewedAt,
      Instant expiresAt,
      long renewCount,
      long leases,
      Optional<Duration> remaining,
      ServerLeaseState serverState,
      Duration heartbeatInterval) {
    this(
        id,
        holder,
        ttl,
        createdAt,
        renewedAt,
        expiresAt,
        renewCount,
        leases,
        remaining,
        serverState,
        heartbeatInterval,
        Optional.empty(),
        Optional.empty(),
        DeadlineSource.UNKNOWN,
        List.of());
  }
}
