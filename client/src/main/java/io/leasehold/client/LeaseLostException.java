package io.leasehold.client;

/**
 * An operation needed a lease that is no longer held: the handle is {@link LeaseState#LOST} (its
 * local deadline passed, or the cluster said it is not held), or it was lost while an action ran
 * under it ({@link LeaseholdClient#withLease}).
 */
public class LeaseLostException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /**
   * The lease the operation needed is no longer held.
   *
   * @param message what went wrong
   */
  public LeaseLostException(String message) {
    super(message);
  }

  /**
   * The lease the operation needed is no longer held, as {@code cause} showed.
   *
   * @param message what went wrong
   * @param cause the failure that led to it (may be null)
   */
  public LeaseLostException(String message, Throwable cause) {
    super(message, cause);
  }
}
