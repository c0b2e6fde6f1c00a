package io.leasehold.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which instances of a service {@link LeaseholdClient#resolve(String, ServiceFilter)} returns: by
 * status, by metadata (exact values), and by zone in order of preference. Immutable; each method
 * returns a new filter.
 *
 * <pre>{@code
 * ServiceFilter filter = ServiceFilter.serving()
 *     .inZones("eu-west-1a", ServiceFilter.ANY_ZONE)   // eu-west-1a's instances, else any zone's
 *     .withMetadata("version", "2.3");
 * }</pre>
 *
 * <p>An instance's zone is its metadata value under {@value #ZONE_KEY}: register it with that
 * metadata, e.g. {@code register("payments", "i-1", address, Map.of("zone", "eu-west-1a"))}. The
 * node checks the filter: a zone or status given twice, an empty one, or more than 16 of either
 * fail the call with an {@link InvalidRequestException} that names the field ({@code zones[1]:
 * ...}).
 */
public final class ServiceFilter {
  /** The metadata key that holds an instance's zone. */
  public static final String ZONE_KEY = "zone";

  /** A zone preference that matches every zone: last in a list, "else any zone". */
  public static final String ANY_ZONE = "*";

  private static final ServiceFilter SERVING =
      new ServiceFilter(List.of(), Map.of(), List.of(), false);

  private static final ServiceFilter ALL = new ServiceFilter(List.of(), Map.of(), List.of(), true);

  private final List<String> zones;
  private final Map<String, String> metadata;
  private final List<String> statuses;
  private final boolean anyStatus;

  private ServiceFilter(
      List<String> zones, Map<String, String> metadata, List<String> statuses, boolean anyStatus) {
    this.zones = zones;
    this.metadata = metadata;
    this.statuses = statuses;
    this.anyStatus = anyStatus;
  }

  /**
   * The SERVING instances, in every zone, whatever their metadata: what {@link
   * LeaseholdClient#resolve(String)} returns.
   *
   * @return the filter
   */
  public static ServiceFilter serving() {
    return SERVING;
  }

  /**
   * Every instance, whatever its status, zone and metadata: a filter that filters nothing, what
   * {@link WatchOptions} start with.
   *
   * @return the filter
   */
  public static ServiceFilter all() {
    return ALL;
  }

  /**
   * Only the instances of the first of these zones that has any matching instance; {@link
   * #ANY_ZONE} matches every zone. Replaces the zones given before.
   *
   * @param zones the zones, most preferred first
   * @return a filter with these zones
   */
  public ServiceFilter inZones(String... zones) {
    List<String> z = new ArrayList<>();
    for (String zone : zones) {
      z.add(Objects.requireNonNull(zone, "zone"));
    }
    return new ServiceFilter(List.copyOf(z), metadata, statuses, anyStatus);
  }

  /**
   * Only instances whose metadata has {@code key} with exactly {@code value}, besides the pairs
   * given before.
   *
   * @param key the metadata key
   * @param value the value it must have
   * @return a filter with this pair too
   */
  public ServiceFilter withMetadata(String key, String value) {
    Map<String, String> m = new LinkedHashMap<>(metadata);
    m.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
    return new ServiceFilter(zones, Collections.unmodifiableMap(m), statuses, anyStatus);
  }

  /**
   * Only instances with one of these statuses (instead of SERVING only).
   *
   * @param statuses the statuses, e.g. {@code "SERVING", "DRAINING"}
   * @return a filter with these statuses and without {@link #anyStatus()}
   */
  public ServiceFilter withStatuses(String... statuses) {
    List<String> s = new ArrayList<>();
    for (String status : statuses) {
      s.add(Objects.requireNonNull(status, "status"));
    }
    return new ServiceFilter(zones, metadata, List.copyOf(s), false);
  }

  /**
   * Instances whatever their status.
   *
   * @return a filter without a status condition
   */
  public ServiceFilter anyStatus() {
    return new ServiceFilter(zones, metadata, List.of(), true);
  }

  /**
   * The zones, most preferred first; empty: every zone.
   *
   * @return the zones
   */
  public List<String> zones() {
    return zones;
  }

  /**
   * The metadata pairs an instance must have.
   *
   * @return the pairs
   */
  public Map<String, String> metadata() {
    return metadata;
  }

  /**
   * The statuses asked for; empty: SERVING, or every status with {@link #isAnyStatus()}.
   *
   * @return the statuses
   */
  public List<String> statuses() {
    return statuses;
  }

  /**
   * Whether every status matches.
   *
   * @return true after {@link #anyStatus()}
   */
  public boolean isAnyStatus() {
    return anyStatus;
  }

  /**
   * Whether a route passes the filter, as {@link LeaseholdClient#routingTable(String,
   * ServiceFilter)} keeps routes: its status (a route without one is not SERVING), every metadata
   * pair, and its zone — in a table, the zones are a set: a route in any of them passes, and {@link
   * #ANY_ZONE} lets every zone pass.
   *
   * @param route a route
   * @return true if the route passes
   */
  public boolean matches(Route route) {
    Objects.requireNonNull(route, "route");
    String status = route.status().orElse("");
    if (!statuses.isEmpty()
        ? !statuses.contains(status)
        : !anyStatus && !Registration.SERVING.equals(status)) {
      return false;
    }
    for (Map.Entry<String, String> want : metadata.entrySet()) {
      if (!want.getValue().equals(route.metadata().get(want.getKey()))) {
        return false;
      }
    }
    return zones.isEmpty()
        || zones.contains(ANY_ZONE)
        || zones.contains(route.metadata().get(ZONE_KEY));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ServiceFilter f
        && zones.equals(f.zones)
        && metadata.equals(f.metadata)
        && statuses.equals(f.statuses)
        && anyStatus == f.anyStatus;
  }

  @Override
  public int hashCode() {
    return Objects.hash(zones, metadata, statuses, anyStatus);
  }

  @Override
  public String toString() {
    return "ServiceFilter[zones="
        + zones
        + ", metadata="
        + metadata
        + ", statuses="
        + (anyStatus ? "any" : statuses.isEmpty() ? "[SERVING]" : statuses)
        + "]";
  }
}
