package io.leasehold.grpc;

import io.grpc.Attributes;
import io.grpc.EquivalentAddressGroup;
import io.leasehold.client.Registration;
import io.leasehold.client.Route;
import io.leasehold.client.ServiceFilter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The routes of a service's instances turned into address groups: one group per SERVING instance,
 * in instance order, holding every address its {@code host:port} stands for.
 *
 * @param groups the SERVING instances' address groups
 * @param notServing how many live instances (of the zones and metadata asked for) have another
 *     status (DRAINING …)
 * @param skipped the SERVING instances left out, each with the reason (an address that is not
 *     {@code host:port}, an unknown host)
 */
record Instances(List<EquivalentAddressGroup> groups, int notServing, List<String> skipped) {
  Instances {
    groups = List.copyOf(groups);
    skipped = List.copyOf(skipped);
  }

  /**
   * Reads the routes under {@code prefix}. May block: a host name is looked up here, since gRPC's
   * transports connect only to resolved addresses.
   */
  static Instances of(String prefix, Collection<Route> routes) {
    return of(prefix, routes, List.of(), Map.of());
  }

  /**
   * Reads the routes under {@code prefix} whose metadata holds every pair of {@code metadata},
   * keeping, when {@code zones} are given, only those of the first zone (an instance's metadata
   * {@code zone}; {@code *} is any zone) that has a SERVING one. The same choice as the node's
   * Resolve with zones and metadata.
   */
  static Instances of(
      String prefix, Collection<Route> routes, List<String> zones, Map<String, String> metadata) {
    List<EquivalentAddressGroup> groups = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    int notServing = 0;
    List<Route> matching = new ArrayList<>();
    for (Route r :
        routes.stream()
            .filter(r -> r.name().startsWith(prefix))
            .filter(
                r ->
                    metadata.entrySet().stream()
                        .allMatch(m -> m.getValue().equals(r.metadata().get(m.getKey()))))
            .sorted(Comparator.comparing(Route::name))
            .toList()) {
      if (!r.status().map(Registration.SERVING::equals).orElse(false)) {
        // Counted for the message when no instance is chosen: those of the zones asked for.
        if (zones.isEmpty()
            || zones.contains(ServiceFilter.ANY_ZONE)
            || zones.contains(r.metadata().get(ServiceFilter.ZONE_KEY))) {
          notServing++;
        }
        continue;
      }
      matching.add(r);
    }
    List<Route> chosen = matching;
    if (!zones.isEmpty()) {
      chosen = List.of();
      for (String zone : zones) {
        List<Route> inZone =
            matching.stream()
                .filter(
                    r ->
                        zone.equals(ServiceFilter.ANY_ZONE)
                            || zone.equals(r.metadata().get(ServiceFilter.ZONE_KEY)))
                .toList();
        if (!inZone.isEmpty()) {
          chosen = inZone;
          break;
        }
      }
    }
    for (Route r : chosen) {
      String instance = r.name().substring(prefix.length());
      try {
        Attributes attributes =
            Attributes.newBuilder()
                .set(LeaseholdNameResolverProvider.INSTANCE, instance)
                .set(LeaseholdNameResolverProvider.METADATA, r.metadata())
                .build();
        groups.add(new EquivalentAddressGroup(addresses(r.address()), attributes));
      } catch (IllegalArgumentException | UnknownHostException e) {
        skipped.add(instance + " (" + e.getMessage() + ")");
      }
    }
    return new Instances(groups, notServing, skipped);
  }

  /** The socket addresses of {@code host:port}; an IP literal needs no lookup. */
  static List<SocketAddress> addresses(String address) throws UnknownHostException {
    int colon = address.lastIndexOf(':');
    int close = address.lastIndexOf(']');
    if (colon < 0 || colon < close) {
      throw new IllegalArgumentException("address \"" + address + "\" is not host:port");
    }
    String host = address.substring(0, colon);
    int port;
    try {
      port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("address \"" + address + "\" has no numeric port");
    }
    if (host.isEmpty() || port < 1 || port > 65535 || host.contains("/")) {
      throw new IllegalArgumentException(
          "address \"" + address + "\" is not host:port with a port from 1 to 65535");
    }
    if (!host.startsWith("[") && host.contains(":")) {
      throw new IllegalArgumentException(
          "address \"" + address + "\" has an IPv6 host outside brackets");
    }
    List<SocketAddress> out = new ArrayList<>();
    for (InetAddress a : InetAddress.getAllByName(host)) {
      out.add(new InetSocketAddress(a, port));
    }
    return out;
  }
}
