package io.leasehold.server.watch;

import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.statemachine.core.RegistryNames;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * Which events a watcher wants: a name prefix, event types, and what the lease's attributes must
 * hold (an address, a zone, metadata, a status).
 *
 * <p>An event passes the attribute filters when its lease does after the change (for an ending, as
 * it was), and an update also when its lease did before it: otherwise a watcher would never hear
 * that a lease it holds in its view stopped passing (a status set to DRAINING, an address removed).
 * An update from history written before events kept the previous attributes passes, as it may have
 * been such a change. Events about no lease (policy changes) pass zones, metadata and statuses;
 * routes only still needs an address.
 *
 * @param zones the zones a lease's {@code zone} metadata must be one of; null: every zone
 * @param statuses the statuses a lease's status must be one of; empty: every status
 */
record WatchFilter(
    String prefix,
    Set<Event.Type> types,
    boolean routesOnly,
    Set<String> zones,
    Map<String, String> metadata,
    Set<String> statuses) {

  static WatchFilter of(WatchRequest r) {
    EnumSet<Event.Type> types = EnumSet.noneOf(Event.Type.class);
    r.getTypesList().forEach(types::add);
    if (types.isEmpty()) {
      types =
          EnumSet.of(
              Event.Type.ACQUIRED,
              Event.Type.UPDATED,
              Event.Type.RELEASED,
              Event.Type.EXPIRED,
              Event.Type.REVOKED);
    }
    if (r.getIncludeRenewals()) {
      types.add(Event.Type.RENEWED);
    }
    Set<String> zones =
        r.getZonesCount() == 0 || r.getZonesList().contains(RegistryNames.ANY_ZONE)
            ? null
            : Set.copyOf(r.getZonesList());
    return new WatchFilter(
        r.getPrefix(),
        types,
        r.getRoutesOnly(),
        zones,
        Map.copyOf(r.getMetadataMap()),
        Set.copyOf(r.getStatusesList()));
  }

  boolean wantsRenewals() {
    return types.contains(Event.Type.RENEWED);
  }

  /** The live path: the fields the hub unpacked once. */
  boolean matches(WireEvent e) {
    return matches(e.type(), e.name(), e.hasLease(), e.attributes(), e.previous());
  }

  /** The history path. */
  boolean matches(Event e) {
    return matches(
        e.getType(),
        e.getName(),
        e.hasLease(),
        e.getLease().getAttributes(),
        e.hasPreviousAttributes() ? e.getPreviousAttributes() : null);
  }

  private boolean matches(
      Event.Type type, String name, boolean hasLease, Attributes after, Attributes before) {
    if (!types.contains(type) || !name.startsWith(prefix)) {
      return false;
    }
    if (passes(hasLease, after)) {
      return true;
    }
    // An update that took the lease out of the filter (or may have: its history lacks the
    // attributes before it) is how the watcher learns to drop it.
    return type == Event.Type.UPDATED && (before == null || passes(true, before));
  }

  private boolean passes(boolean hasLease, Attributes a) {
    if (routesOnly && a.getAddress().isEmpty()) {
      return false;
    }
    if (!hasLease) {
      return true;
    }
    if (!statuses.isEmpty() && !statuses.contains(a.getStatus())) {
      return false;
    }
    if (zones != null && !zones.contains(a.getMetadataOrDefault(RegistryNames.ZONE_KEY, ""))) {
      return false;
    }
    for (Map.Entry<String, String> want : metadata.entrySet()) {
      if (!want.getValue().equals(a.getMetadataOrDefault(want.getKey(), null))) {
        return false;
      }
    }
    return true;
  }
}
