package io.leasehold.client;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link LeaseholdClient#resolve(String, ServiceFilter)} found: the matching instances, the
 * zone they were chosen by, and the revision the answer reflects.
 *
 * @param instances the matching instances, in instance order
 * @param zone the entry of the filter's zones that chose them ({@link ServiceFilter#ANY_ZONE} when
 *     the wildcard did); empty when the filter named no zones or no zone had a match
 * @param revision the cluster's revision the answer reflects
 */
public record ResolvedService(
    List<ServiceInstance> instances, Optional<String> zone, long revision) {
  /**
   * Checks the fields and copies the list.
   *
   * @param instances the matching instances, in instance order
   * @param zone the zone they were chosen by, if any
   * @param revision the cluster's revision the answer reflects
   */
  public ResolvedService {
    instances = List.copyOf(instances);
    Objects.requireNonNull(zone, "zone");
  }
}
