package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.LeaseRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The live leases by holder (and, within a holder, by namespace) and by namespace, each in token
 * (grant) order, kept in step with the lease map: a ban ends a holder's leases without scanning
 * every lease, and quotas count in constant time. Apply thread only.
 */
final class LeaseIndex {
  /** Holder to namespace to (token to name). */
  private final Map<String, Map<String, TreeMap<Long, String>>> byHolder = new HashMap<>();
  private final Map<String, TreeMap<Long, String>> byNamespace = new HashMap<>();

  void add(String name, LeaseRecord lease) {
    String namespace = namespace(name);
    byHolder.computeIfAbsent(lease.getHolder(), h -> new HashMap<>())
        .computeIfAbsent(namespace, n -> new TreeMap<>()).put(lease.getToken(), name);
    byNamespace.computeIfAbsent(namespace, n -> new TreeMap<>()).put(lease.getToken(), name);
  }

  void remove(String name, LeaseRecord lease) {
    String namespace = namespace(name);
    Map<String, TreeMap<Long, String>> held = byHolder.get(lease.getHolder());
    if (held != null) {
      removeFrom(held, namespace, lease.getToken());
      if (held.isEmpty()) {
        byHolder.remove(lease.getHolder());
      }
    }
    removeFrom(byNamespace, namespace, lease.getToken());
  }

  void clear() {
    byHolder.clear();
    byNamespace.clear();
  }

  /** The leases a holder holds in a namespace. */
  int heldBy(String holder, String namespace) {
    TreeMap<Long, String> m = group(holder, namespace);
    return m == null ? 0 : m.size();
  }

  int inNamespace(String namespace) {
    TreeMap<Long, String> m = byNamespace.get(namespace);
    return m == null ? 0 : m.size();
  }

  /** The names a holder holds, in every namespace, oldest grant first. */
  List<String> namesHeldBy(String holder) {
    Map<String, TreeMap<Long, String>> held = byHolder.get(holder);
    if (held == null) {
      return List.of();
    }
    TreeMap<Long, String> all = new TreeMap<>();
    held.values().forEach(all::putAll);
    return new ArrayList<>(all.values());
  }

  /** Whether the holder's lease with this token is among its {@code quota} oldest in the namespace. */
  boolean holderWithin(String holder, String namespace, long token, long quota) {
    return within(group(holder, namespace), token, quota);
  }

  private TreeMap<Long, String> group(String holder, String namespace) {
    Map<String, TreeMap<Long, String>> held = byHolder.get(holder);
    return held == null ? null : held.get(namespace);
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
