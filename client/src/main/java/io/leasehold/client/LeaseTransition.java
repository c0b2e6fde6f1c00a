package io.leasehold.client;

import java.util.Objects;
import java.util.Optional;

/**
 * A lease handle moved from one state to another.
 *
 * @param lease the handle
 * @param from its previous state
 * @param to its new state
 * @param reason why it was lost, when {@code to} is {@link LeaseState#LOST}
 */
public record LeaseTransition(
    Lease lease, LeaseState from, LeaseState to, Optional<LossReason> reason) {
  /**
   * Checks that every field is given.
   *
   * @param lease the handle
   * @param from its previous state
   * @param to its new state
   * @param reason why it was lost, when {@code to} is {@link LeaseState#LOST}
   */
  public LeaseTransition {
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Objects.requireNonNull(reason, "reason");
  }

  /**
   * The lease, the two states and the reason.
   *
   * @return a description for logs
   */
  @Override
  public String toString() {
    return lease.name()
        + " (token "
        + lease.token()
        + "): "
        + from
        + " -> "
        + to
        + reason.map(r -> " (" + r + ")").orElse("");
  }
}
