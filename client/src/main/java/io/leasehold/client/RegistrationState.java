package io.leasehold.client;

/** Where a {@link Registration} stands. */
public enum RegistrationState {
  /** Registered, and its lease is being renewed. */
  REGISTERED,
  /** Its lease's renewal is overdue; still registered if a renewal succeeds in time. */
  JEOPARDY,
  /**
   * Its lease was lost. If the registration re-registers after a loss (the default) it tries again,
   * with backoff, and goes back to REGISTERED with a new token.
   */
  LOST,
  /** Deregistered or closed. Final. */
  DEREGISTERED
}
