package io.leasehold.client;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * Why the leader moved a lease's deadline past its last renewal plus TTL and grace period ({@link
 * LeaseInfo#extensions()}).
 *
 * @param reason why
 * @param at when the leader took over, or when the stall ended (the leader's clock)
 * @param by how much later the lease ends because of it
 * @param term the leader's Raft term
 */
public record DeadlineExtension(Reason reason, Instant at, Duration by, long term) {
  /** Why a deadline moved. */
  public enum Reason {
    /**
     * The leader took over (an election, a restart) after the lease's last renewal and gave it a
     * full TTL from then: a renewal may have reached the old leader just before it died.
     */
    LEADER_CHANGE,
    /**
     * The leader's ticker or apply loop stalled (GC, a slow disk) after the last renewal: every
     * deadline moved out by the stall.
     */
    STALL,
    /** A reason newer than this SDK. */
    UNKNOWN
  }

  /**
   * Checks that every field is given.
   *
   * @param reason why
   * @param at when the leader took over, or when the stall ended
   * @param by how much later the lease ends because of it
   * @param term the leader's Raft term
   */
  public DeadlineExtension {
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(by, "by");
  }
}
