package io.leasehold.grpc;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@code leasehold:} target, checked: the service whose instances to resolve, the authority the
 * channel's calls carry, the cluster endpoints the target names, if any, and the instances it asks
 * for (zones in order of preference, metadata values).
 *
 * @param service the service, one segment of a lease name
 * @param authority the channel's default authority: the service as written in the target
 * @param endpoints the cluster endpoints in the target's authority; absent if it has none
 * @param zones the query's {@code zone}: zones in order of preference, {@code *} for any; empty:
 *     every zone
 * @param metadata the query's {@code meta.<key>=<value>} pairs an instance must have
 */
record LeaseholdTarget(
    String service,
    String authority,
    Optional<List<String>> endpoints,
    List<String> zones,
    Map<String, String> metadata) {
  static final String FORMS =
      "leasehold:///<service> or leasehold://<host:port>[,<host:port>...]/<service>, optionally"
          + " with ?zone=<zone>[,<zone>...]&meta.<key>=<value>";

  LeaseholdTarget {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(authority, "authority");
    endpoints = endpoints.map(List::copyOf);
    zones = List.copyOf(zones);
    metadata = Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
  }

  /** A target for every SERVING instance, in every zone. */
  LeaseholdTarget(String service, String authority, Optional<List<String>> endpoints) {
    this(service, authority, endpoints, List.of(), Map.of());
  }

  /** The routing-table prefix of the service's instances, {@code service/<service>/}. */
  String prefix() {
    return "service/" + service + "/";
  }

  /**
   * Checks a target; the error names the part at fault and its rule.
   *
   * @throws IllegalArgumentException if the target is not one of {@link #FORMS}
   */
  static LeaseholdTarget parse(URI uri) {
    if (uri.isOpaque()) {
      throw bad(uri, "target", "must be " + FORMS);
    }
    List<String> zones = new ArrayList<>();
    Map<String, String> metadata = new LinkedHashMap<>();
    if (uri.getRawQuery() != null) {
      query(uri, zones, metadata);
    }
    if (uri.getRawFragment() != null) {
      throw bad(uri, "fragment", "is not supported; the target must be " + FORMS);
    }
    String path = Optional.ofNullable(uri.getPath()).orElse("");
    String service = path.startsWith("/") ? path.substring(1) : path;
    if (service.isEmpty()) {
      throw bad(uri, "service", "must not be empty; the target must be " + FORMS);
    }
    for (int i = 0; i < service.length(); i++) {
      char c = service.charAt(i);
      if (c == '/') {
        throw bad(
            uri,
            "service",
            "must not contain '/' (found at "
                + i
                + " of \""
                + service
                + "\"): it is one segment of service/<service>/<instance>");
      }
      if (Character.isISOControl(c)) {
        throw bad(
            uri,
            "service",
            "must not contain control characters (found U+"
                + String.format("%04X", (int) c)
                + " at "
                + i
                + ")");
      }
    }
    String rawPath = uri.getRawPath();
    String authority = rawPath.startsWith("/") ? rawPath.substring(1) : rawPath;
    Optional<List<String>> endpoints =
        Optional.ofNullable(uri.getRawAuthority())
            .filter(a -> !a.isEmpty())
            .map(
                a -> {
                  try {
                    return Endpoints.parse("authority", a);
                  } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(e.getMessage() + " (target " + uri + ")", e);
                  }
                });
    return new LeaseholdTarget(service, authority, endpoints, zones, metadata);
  }

  /**
   * The query's parameters: {@code zone=<zone>[,<zone>...]} once, and {@code meta.<key>=<value>}
   * for each metadata pair; values are URL-decoded.
   */
  private static void query(URI uri, List<String> zones, Map<String, String> metadata) {
    boolean zoneSeen = false;
    for (String param : uri.getRawQuery().split("&", -1)) {
      int eq = param.indexOf('=');
      String name = decode(eq < 0 ? param : param.substring(0, eq));
      String value = eq < 0 ? "" : decode(param.substring(eq + 1));
      if (name.equals("zone")) {
        if (zoneSeen) {
          throw bad(uri, "query", "zone is given twice; list the zones in one: zone=a,b,*");
        }
        zoneSeen = true;
        for (String zone : value.split(",", -1)) {
          if (zone.isEmpty()) {
            throw bad(
                uri,
                "zone",
                "each zone must be non-empty, separated by ','; got \"" + value + "\"");
          }
          if (zones.contains(zone)) {
            throw bad(uri, "zone", "\"" + zone + "\" is given twice");
          }
          zones.add(zone);
        }
      } else if (name.startsWith(META) && name.length() > META.length()) {
        String key = name.substring(META.length());
        if (metadata.put(key, value) != null) {
          throw bad(uri, "query", name + " is given twice");
        }
      } else {
        throw bad(
            uri,
            "query",
            "unknown parameter \""
                + name
                + "\"; expected zone=<zone>[,<zone>...] or meta.<key>=<value>");
      }
    }
  }

  private static final String META = "meta.";

  /** What the target asks of instances besides SERVING, for messages: "" when nothing. */
  String filterText() {
    String z = zones.isEmpty() ? "" : " in zone " + String.join(" else ", zones);
    String m = metadata.isEmpty() ? "" : " with metadata " + metadata;
    return z + m;
  }

  private static String decode(String raw) {
    return URLDecoder.decode(raw, StandardCharsets.UTF_8);
  }

  private static IllegalArgumentException bad(URI uri, String part, String rule) {
    return new IllegalArgumentException(part + ": " + rule + " (target " + uri + ")");
  }
}
