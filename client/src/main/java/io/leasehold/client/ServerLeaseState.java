package io.leasehold.client;

/** How the serving node judged a lease it read ({@link LeaseInfo#serverState()}). */
public enum ServerLeaseState {
  /** Renewed within twice its heartbeat interval. */
  ACTIVE,
  /** Its last renewal is older than twice its heartbeat interval: its holder is probably gone. */
  STALE,
  /**
   * Past its estimated end and inside its grace period: the cluster expires it when the grace runs
   * out.
   */
  EXPIRING,
  /** Not judged: leases carried by events, or a state newer than this SDK. */
  UNKNOWN
}
