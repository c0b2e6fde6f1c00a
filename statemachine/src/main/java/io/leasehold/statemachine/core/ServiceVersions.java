package io.leasehold.statemachine.core;

import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.Space;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A service's version: the revision of the last change to its instance set, the leases named {@code
 * service/<service>/<instance>} — a registration, an ending, an update of address, metadata or
 * status, a transfer; not a renewal. It only rises, with every such change (by the gap between
 * revisions, not by one), as Consul's modify index does. Kept in {@link Space#SERVICE_VERSIONS}
 * from log format 5 on.
 */
public final class ServiceVersions {
  private static final String PREFIX = RegistryNames.NAMESPACE;

  private ServiceVersions() {}

  /**
   * The service a lease name is an instance of: {@code service/<service>/<instance>}, both parts
   * non-empty and the instance without a further '/'; null for any other name.
   */
  public static String serviceOf(String name) {
    if (!name.startsWith(PREFIX)) {
      return null;
    }
    int slash = name.indexOf('/', PREFIX.length());
    if (slash <= PREFIX.length()
        || slash == name.length() - 1
        || name.indexOf('/', slash + 1) >= 0) {
      return null;
    }
    return name.substring(PREFIX.length(), slash);
  }

  /** Whether an event of this type changes the instance set of its service. */
  static boolean changes(LeaseEvent.Type type) {
    return type != LeaseEvent.Type.RENEWED && type != LeaseEvent.Type.POLICY_CHANGED;
  }

  /** The services whose instance set {@code events} changed. */
  public static Set<String> changedBy(List<LeaseEvent> events) {
    Set<String> services = new HashSet<>(0);
    for (LeaseEvent e : events) {
      if (changes(e.type())) {
        String service = serviceOf(e.name());
        if (service != null) {
          services.add(service);
        }
      }
    }
    return services;
  }

  /** The writes that set each of {@code services} to version {@code revision}. */
  static void put(Set<String> services, long revision, List<Change> changes) {
    byte[] value = encode(revision);
    for (String service : services) {
      changes.add(Change.put(Space.SERVICE_VERSIONS, LeaseCore.utf8(service), value));
    }
  }

  static byte[] encode(long revision) {
    return ByteBuffer.allocate(8).putLong(revision).array();
  }

  static long decode(byte[] value) {
    return ByteBuffer.wrap(value).getLong();
  }
}
