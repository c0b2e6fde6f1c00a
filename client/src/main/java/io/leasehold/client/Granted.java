package io.leasehold.client;

import java.util.Objects;

/**
 * The name was granted: this client holds it now.
 *
 * @param lease the new lease, renewed by the client until released or lost
 */
public record Granted(Lease lease) implements AcquireResult {
  /**
   * Checks that the lease is given.
   *
   * @param lease the new lease, renewed by the client until released or lost
   */
  public Granted {
    Objects.requireNonNull(lease, "lease");
  }
}
