package io.leasehold.client;

import java.util.List;
import java.util.Objects;

/**
 * The leases under a prefix ({@link LeaseholdClient#list}), in name order.
 *
 * @param leases the leases
 * @param revision the revision the (first page of the) listing was read at: watch from {@code
 *     revision + 1} to follow changes
 */
public record LeaseListing(List<LeaseInfo> leases, long revision) {
  /**
   * Checks the fields and copies the leases.
   *
   * @param leases the leases
   * @param revision the revision the (first page of the) listing was read at: watch from {@code
   *     revision + 1} to follow changes
   */
  public LeaseListing {
    leases = List.copyOf(Objects.requireNonNull(leases, "leases"));
  }
}
