package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.LeaseRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The live leases by holder (and, within a holder, by namespace) and by namespace, each in token
 * (grant) order, kept in step with the lease map: a ban ends a holder's leases without scanning
 * every lease, and quotas count in constant time. Apply thread only.
 *
 * <p>Built to keep few objects per lease (see {@link TokenOrder}): every replica holds every live
 * lease. The holder and namespace strings are shared through the index's own keys ({@link
 * #holder}).
 */
final class LeaseIndex {
  private final Map<String, HolderLeases> byHolder = new HashMap<>();

  /**
   * Concurrent so that the node's metrics can count leases by namespace from another thread ({@link
   * #countsByNamespace}) without scanning them; only the apply thread writes it.
   */
  private final Map<String, TokenOrder> byNamespace = new ConcurrentHashMap<>();

  /**
   * A holder's leases, per namespace. Most holders use one namespace (a runner's locks, a service's
   * instances), so its group is a field, and a map exists only for the others.
   */
  private static final class HolderLeases {
    final String holder;
    TokenOrder first;
    Map<String, TokenOrder> others;

    HolderLeases(String holder) {
      this.holder = holder;
    }

    TokenOrder group(String namespace) {
      if (first != null && first.namespace.equals(namespace)) {
        return first;
      }
      return others == null ? null : others.get(namespace);
    }

    TokenOrder groupOrNew(String namespace) {
      TokenOrder g = group(namespace);
      if (g != null) {
        return g;
      }
      g = new TokenOrder(namespace);
      if (first == null) {
        first = g;
      } else {
        if (others == null) {
          others = new HashMap<>(4);
        }
        others.put(namespace, g);
      }
      return g;
    }

    /** Drops an emptied group; whether the holder has none left. */
    boolean dropIfEmpty(TokenOrder g) {
      if (!g.isEmpty()) {
        return false;
      }
      if (g == first) {
        first = null;
        if (others != null && !others.isEmpty()) {
          // Promote any other group, so that first is null only when there is none.
          Map.Entry<String, TokenOrder> next = others.entrySet().iterator().next();
          first = next.getValue();
          others.remove(next.getKey());
        }
      } else if (others != null) {
        others.remove(g.namespace);
      }
      if (others != null && others.isEmpty()) {
        others = null;
      }
      return first == null;
    }

    void forEach(Consumer<TokenOrder> visitor) {
      if (first != null) {
        visitor.accept(first);
      }
      if (others != null) {
        others.values().forEach(visitor);
      }
    }
  }

  void add(String name, LeaseRecord lease) {
    String namespace = namespace(name);
    TokenOrder inNamespace = byNamespace.get(namespace);
    if (inNamespace == null) {
      inNamespace = new TokenOrder(namespace);
      byNamespace.put(namespace, inNamespace);
    }
    inNamespace.add(lease.getToken(), name);
    HolderLeases held = byHolder.get(lease.getHolder());
    if (held == null) {
      held = new HolderLeases(lease.getHolder());
      byHolder.put(held.holder, held);
    }
    // The namespace's own string, not this name's substring, is what the holder's group keeps.
    held.groupOrNew(inNamespace.namespace).add(lease.getToken(), name);
  }

  void remove(String name, LeaseRecord lease) {
    String namespace = namespace(name);
    HolderLeases held = byHolder.get(lease.getHolder());
    if (held != null) {
      TokenOrder g = held.group(namespace);
      if (g != null) {
        g.remove(lease.getToken());
        if (held.dropIfEmpty(g)) {
          byHolder.remove(lease.getHolder());
        }
      }
    }
    TokenOrder inNamespace = byNamespace.get(namespace);
    if (inNamespace != null) {
      inNamespace.remove(lease.getToken());
      if (inNamespace.isEmpty()) {
        byNamespace.remove(namespace);
      }
    }
  }

  void clear() {
    byHolder.clear();
    byNamespace.clear();
  }

  /**
   * The index's own string for this holder if it holds a lease, else {@code holder}: a new lease
   * record that keeps it shares one string with the holder's other leases.
   */
  String holder(String holder) {
    HolderLeases held = byHolder.get(holder);
    return held == null ? holder : held.holder;
  }

  /** The leases a holder holds in a namespace. */
  int heldBy(String holder, String namespace) {
    TokenOrder g = group(holder, namespace);
    return g == null ? 0 : g.size();
  }

  /**
   * The live leases of each namespace, safe to call from any thread: each count is as the apply
   * thread last left it (a racy but whole read of an int), and the set of namespaces is weakly
   * consistent.
   */
  Map<String, Long> countsByNamespace() {
    Map<String, Long> out = new TreeMap<>();
    byNamespace.forEach((namespace, order) -> out.put(namespace, (long) order.size()));
    return out;
  }

  int inNamespace(String namespace) {
    TokenOrder g = byNamespace.get(namespace);
    return g == null ? 0 : g.size();
  }

  /** The names a holder holds, in every namespace, oldest grant first. */
  List<String> namesHeldBy(String holder) {
    HolderLeases held = byHolder.get(holder);
    if (held == null) {
      return List.of();
    }
    record Held(long token, String name) {}
    List<Held> all = new ArrayList<>();
    held.forEach(g -> g.forEach((name, token) -> all.add(new Held(token, name))));
    all.sort((a, b) -> Long.compare(a.token(), b.token()));
    List<String> names = new ArrayList<>(all.size());
    all.forEach(h -> names.add(h.name()));
    return names;
  }

  /**
   * Whether the holder's lease with this token is among its {@code quota} oldest in the namespace.
   */
  boolean holderWithin(String holder, String namespace, long token, long quota) {
    return within(group(holder, namespace), token, quota);
  }

  private TokenOrder group(String holder, String namespace) {
    HolderLeases held = byHolder.get(holder);
    return held == null ? null : held.group(namespace);
  }

  /** Whether the namespace's lease with this token is among its {@code quota} oldest. */
  boolean namespaceWithin(String namespace, long token, long quota) {
    return within(byNamespace.get(namespace), token, quota);
  }

  private static boolean within(TokenOrder group, long token, long quota) {
    if (group == null || group.size() <= quota) {
      return true;
    }
    // Over the quota (it was lowered): only then count, which walks the older leases.
    return group.countBefore(token) < quota;
  }

  static String namespace(String name) {
    return name.substring(0, name.indexOf('/'));
  }
}
