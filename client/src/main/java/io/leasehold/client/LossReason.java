package io.leasehold.client;

/** Why a lease handle became {@link LeaseState#LOST}. */
public enum LossReason {
  /**
   * The cluster answered that it no longer holds the lease with this token: it expired there, was
   * revoked, or the name was granted again.
   */
  NOT_HELD,
  /**
   * The client-side deadline (send time of the last successful renewal + TTL − drift margin) passed
   * without a successful renewal. The cluster may still hold the lease for a moment; the client
   * asks it to release the lease, but the application must assume it is gone.
   */
  DEADLINE_PASSED,
  /** The client was closed while the lease was held and could not release it. */
  CLIENT_CLOSED,
  /** This client handed the lease to another holder ({@link Lease#transferTo}). */
  TRANSFERRED
}
