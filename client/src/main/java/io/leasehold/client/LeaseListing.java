package io.leasehold.client;

import java.util.List;
import java.util.Objects;

/**
 * The leases under a prefix ({@link LeaseholdClient#list}), in name order.
 *
 * @param leases the leases
 * @param revision the revision the (first page of the) listing was read at: watch from {@code
 *     revision + 1} to follow changes ({@link WatchOptions#withStartAfter})
 * @param group the Raft group whose revision it is: on a cluster with lease groups, the group a
 *     listing of one namespace was read from (each group counts its own revisions); otherwise 0
 */
public record LeaseListing(List<LeaseInfo> leases, long revision, int group) {
  /**
   * Checks the fields and copies the leases.
   *
   * @param leases the leases
   * @param revision the revision the (first page of the) listing was read at
   * @param group the Raft group whose revision it is (0: the meta group)
   */
  public LeaseListing {
    leases = List.copyOf(Objects.requireNonNull(leases, "leases"));
    if (group < 0) {
      throw new IllegalArgumentException("group: must be >= 0 (0: the meta group), got " + group);
    }
  }

  /**
   * A listing of the meta group (a cluster without lease groups).
   *
   * @param leases the leases
   * @param revision the revision the (first page of the) listing was read at
   */
  public LeaseListing(List<LeaseInfo> leases, long revision) {
    this(leases, revision, 0);
  }
}
