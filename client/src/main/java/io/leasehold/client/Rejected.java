package io.leasehold.client;

import java.util.Objects;

/**
 * The cluster's policy refused the name to this client.
 *
 * @param rejection why, and the bounds that apply
 */
public record Rejected(Rejection rejection) implements AcquireResult {
  /**
   * Checks that the rejection is given.
   *
   * @param rejection why, and the bounds that apply
   */
  public Rejected {
    Objects.requireNonNull(rejection, "rejection");
  }
}
