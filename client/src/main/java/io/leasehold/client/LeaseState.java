package io.leasehold.client;

/**
 * Where a {@link Lease} handle stands, judged on the client's own monotonic clock.
 *
 * <pre>
 *   HELD ⇄ JEOPARDY ──► LOST       (final: never valid again)
 *     └───────┴──────► RELEASED    (final: the application let it go)
 * </pre>
 */
public enum LeaseState {
  /** Renewals are succeeding; the lease is valid. */
  HELD,
  /**
   * A renewal is overdue (renewals are failing or not answered), or the cluster's policy refuses to
   * renew the lease ({@link Lease#renewalRejection()}), but the local deadline has not passed: the
   * lease is still valid, and goes back to HELD if a renewal succeeds in time. A careful holder
   * stops starting new work here.
   */
  JEOPARDY,
  /**
   * The local deadline passed without a successful renewal, or the cluster said the lease is no
   * longer held, or the client was closed. Stop acting on the lease at once.
   */
  LOST,
  /** {@link Lease#release()} was called. */
  RELEASED;

  /**
   * Whether the handle is finished (LOST or RELEASED) and will never change again.
   *
   * @return whether the state is final
   */
  public boolean isFinal() {
    return this == LOST || this == RELEASED;
  }
}
