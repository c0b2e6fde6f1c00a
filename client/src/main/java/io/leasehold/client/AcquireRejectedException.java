package io.leasehold.client;

/**
 * The cluster's policy refused an acquisition, a registration, a transfer (the new holder's
 * acquisition) or a renewal by token ({@link LeaseholdClient#renew}); waiting will not change that.
 */
public class AcquireRejectedException extends LeaseholdException {
  private static final long serialVersionUID = 1L;
  private final transient Rejection rejection;

  /**
   * Policy refused {@code name}, for the reason in {@code rejection}.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param rejection the policy's refusal
   */
  public AcquireRejectedException(String name, Rejection rejection) {
    super(name + ": rejected (" + rejection.reason() + "): " + rejection.message());
    this.rejection = rejection;
  }

  /**
   * Why the cluster's policy refused.
   *
   * @return the policy's refusal
   */
  public Rejection rejection() {
    return rejection;
  }
}
