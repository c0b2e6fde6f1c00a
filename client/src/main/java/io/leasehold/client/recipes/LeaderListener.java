package io.leasehold.client.recipes;

/**
 * Told when this candidate starts and stops leading, on the client's callback executor, in order.
 * Leadership may stop and start again with the same token: a renewal that was late (JEOPARDY) and
 * then succeeded in time means the lease never ended, so no one else led in between.
 */
public interface LeaderListener {
  /**
   * This candidate leads now; fence the work it does as leader with {@code token}.
   *
   * @param token the fencing token of the leadership
   */
  void takeLeadership(long token);

  /**
   * This candidate no longer leads (its lease is in jeopardy, lost or released): stop leading work
   * at once.
   */
  void revokeLeadership();
}
