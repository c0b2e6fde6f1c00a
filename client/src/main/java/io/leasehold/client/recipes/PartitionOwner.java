package io.leasehold.client.recipes;

import java.util.Objects;
import java.util.Optional;

/**
 * Who owns a partition, as a member's view of the group shows it: the holder of the partition's
 * lease, the address it gave, and the lease's fencing token.
 *
 * @param partition the partition, {@code 0..n-1}
 * @param holder the owning member's id (its client's holder identity)
 * @param address where the owner serves, if it gave an address
 * @param token the fencing token of the owner's lease on the partition
 */
public record PartitionOwner(int partition, String holder, Optional<String> address, long token) {
  /**
   * Checks the components.
   *
   * @param partition the partition, not negative
   * @param holder the owning member's id
   * @param address where the owner serves, if it gave an address
   * @param token the fencing token of the owner's lease on the partition
   */
  public PartitionOwner {
    if (partition < 0) {
      throw new IllegalArgumentException("partition: must not be negative, got " + partition);
    }
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(address, "address");
  }
}
