package io.leasehold.client;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link LeaseholdClient#resolve(String, ServiceFilter)} found: the matching instances, the
 * zone they were chosen by, the revision the answer reflects, and the service's version.
 *
 * @param instances the matching instances, in instance order
 * @param zone the entry of the filter's zones that chose them ({@link ServiceFilter#ANY_ZONE} when
 *     the wildcard did); empty when the filter named no zones or no zone had a match
 * @param revision the cluster's revision the answer reflects
 * @param version the service's version: the revision of the last change to its instance set (a
 *     registration, an ending, an update; not a renewal); give it to {@link
 *     LeaseholdClient#resolveChange} to hear of the next change. 0 before the cluster runs a
 *     version that keeps it.
 */
public record ResolvedService(
    List<ServiceInstance> instances, Optional<String> zone, long revision, long version) {
  /**
   * Checks the fields and copies the list.
   *
   * @param instances the matching instances, in instance order
   * @param zone the zone they were chosen by, if any
   * @param revision the cluster's revision the answer reflects
   * @param version the service's version
   */
  public ResolvedService {
    instances = List.copyOf(instances);
    Objects.requireNonNull(zone, "zone");
  }
}
