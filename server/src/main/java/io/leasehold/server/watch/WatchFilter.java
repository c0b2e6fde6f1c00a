package io.leasehold.server.watch;

import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.WatchRequest;
import java.util.EnumSet;
import java.util.Set;

/**
 * Which events a watcher wants: a name prefix, event types, and whether only routes (leases with an
 * address).
 */
record WatchFilter(String prefix, Set<Event.Type> types, boolean routesOnly) {

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
    return new WatchFilter(r.getPrefix(), types, r.getRoutesOnly());
  }

  boolean wantsRenewals() {
    return types.contains(Event.Type.RENEWED);
  }

  /** The live path: the fields the hub unpacked once. */
  boolean matches(WireEvent e) {
    return matches(e.type(), e.name(), e.hasAddress());
  }

  /** The history path. */
  boolean matches(Event e) {
    return matches(e.getType(), e.getName(), !e.getLease().getAttributes().getAddress().isEmpty());
  }

  private boolean matches(Event.Type type, String name, boolean hasAddress) {
    return types.contains(type) && name.startsWith(prefix) && (!routesOnly || hasAddress);
  }
}
