package io.leasehold.grpc;

import java.net.URI;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@code leasehold:} target, checked: the service whose instances to resolve, the authority the
 * channel's calls carry, and the cluster endpoints the target names, if any.
 *
 * @param service the service, one segment of a lease name
 * @param authority the channel's default authority: the service as written in the target
 * @param endpoints the cluster endpoints in the target's authority; absent if it has none
 */
record LeaseholdTarget(String service, String authority, Optional<List<String>> endpoints) {
  static final String FORMS =
      "leasehold:///<service> or leasehold://<host:port>[,<host:port>...]/<service>";

  LeaseholdTarget {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(authority, "authority");
    endpoints = endpoints.map(List::copyOf);
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
    if (uri.getRawQuery() != null) {
      throw bad(uri, "query", "is not supported; the target must be " + FORMS);
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
    return new LeaseholdTarget(service, authority, endpoints);
  }

  private static IllegalArgumentException bad(URI uri, String part, String rule) {
    return new IllegalArgumentException(part + ": " + rule + " (target " + uri + ")");
  }
}
