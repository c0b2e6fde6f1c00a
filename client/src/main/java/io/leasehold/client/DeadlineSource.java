package io.leasehold.client;

/**
 * Where a read's {@link LeaseInfo#deadline()} comes from. Only the leader decides expiry, and only
 * the leader knows when it extended a lease (after it took over, or after a stall): the node that
 * serves a read asks it.
 */
public enum DeadlineSource {
  /** The leader's expiry ticker: the deadline it acts on. */
  LEADER,
  /**
   * Not known to the serving node (a stale read on a follower, no leader to ask, one still taking
   * over or older than this feature): the estimate {@code expiresAt} plus the grace period. The
   * leader never acts sooner, and may act later if it extended the lease.
   */
  ESTIMATE,
  /** No deadline: leases carried by events and replies, or a server older than this SDK. */
  UNKNOWN
}
