package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.LeaseRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The live leases by holder and by namespace, each in token (grant) order, kept in step with the
 * lease map: a ban ends a holder's leases without scanning every lease, and quotas count in
 * constant time. Apply thread only.
 */
final class LeaseIndex {
  private final Map<String, TreeMap<Long, String>> byHolder = new HashMap<>();
  private final Map<String, TreeMap<Long, String>> byNamespace = new HashMap<>();

  void add(String name, LeaseRecord lease) {
    byHolder.computeIfAbsent(lease.getHolder(), h -> new TreeMap<>()).put(lease.getToken(), name);
    byNamespace.computeIfAbsent(namespace(name), n -> new TreeMap<>()).put(lease.getToken(), name);
  }

  void remove(String name, LeaseRecord lease) {
    removeFrom(byHolder, lease.getHolder(), lease.getToken());
    removeFrom(byNamespace, namespace(name), lease.getToken());
  }

  void clear() {
    byHolder.clear();
    byNamespace.clear();
  }

  int heldBy(String holder) {
    TreeMap<Long, String> m = byHolder.get(holder);
    return m == null ? 0 : m.size();
  }

  int inNamespace(String namespace) {
    TreeMap<Long, String> m = byNamespace.get(namespace);
    return m == null ? 0 : m.size();
  }

  /** The names a holder holds, oldest grant first. */
  List<String> namesHeldBy(String holder) {
    TreeMap<Long, String> m = byHolder.get(holder);
    return m == null ? List.of() : new ArrayList<>(m.values());
  }

  /** Whether the holder's lease with this token is among its {@code quota} oldest. */
  boolean holderWithin(String holder, long token, long quota) {
    return within(byHolder.get(holder), token, quota);
  }

  /** Whether the namespace's lease with this token is among its {@code quota} oldest. */
  boolean namespaceWithin(String namespace, long token, long quota) {
    return within(byNamespace.get(namespace), token, quota);
  }

  private static boolean within(TreeMap<Long, String> group, long token, long quota) {
    if (group == null || group.size() <= quota) {
      return true;
    }
    // Over the quota (it was lowered): only then count, which walks the older leases.
    return group.headMap(token, false).size() < quota;
  }

  static String namespace(String name) {
    return name.substring(0, name.indexOf('/'));
  }

  private static void removeFrom(Map<String, TreeMap<Long, String>> index, String key, long token) {
    TreeMap<Long, String> m = index.get(key);
    if (m != null) {
      m.remove(token);
      if (m.isEmpty()) {
        index.remove(key);
      }
    }
  }
}
