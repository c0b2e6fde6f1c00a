package io.leasehold.client.recipes;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Records each member's ownership intervals of each partition from its callbacks (assigned to
 * revoked, or to the moment the test killed it), and finds two owners at once.
 */
final class OwnershipLog {
  record Interval(String member, int partition, long token, long from, long to) {}

  private final Map<String, Map<Integer, Interval>> open = new HashMap<>();
  private final List<Interval> closed = new ArrayList<>();
  private final List<String> misuse = new ArrayList<>();
  private final java.util.Set<String> dead = new java.util.HashSet<>();

  PartitionListener listenerFor(String member) {
    return new PartitionListener() {
      @Override
      public void onAssigned(int partition, long token) {
        assigned(member, partition, token);
      }

      @Override
      public void onRevoked(int partition) {
        revoked(member, partition);
      }
    };
  }

  synchronized void assigned(String member, int partition, long token) {
    if (dead.contains(member)) {
      misuse.add(member + " assigned " + partition + " after it was killed");
      return;
    }
    Interval previous =
        open.computeIfAbsent(member, m -> new HashMap<>())
            .put(
                partition,
                new Interval(member, partition, token, System.nanoTime(), Long.MAX_VALUE));
    if (previous != null) {
      misuse.add(member + " assigned " + partition + " twice without a revocation");
    }
  }

  synchronized void revoked(String member, int partition) {
    if (dead.contains(member)) {
      return; // its intervals ended when it was killed
    }
    Interval i = open.getOrDefault(member, Map.of()).get(partition);
    if (i == null) {
      misuse.add(member + " revoked " + partition + " it was not assigned");
      return;
    }
    open.get(member).remove(partition);
    closed.add(new Interval(member, partition, i.token(), i.from(), System.nanoTime()));
  }

  /** A killed process stops using everything at once: its open intervals end now. */
  synchronized void killed(String member) {
    for (Interval i : new ArrayList<>(open.getOrDefault(member, Map.of()).values())) {
      revoked(member, i.partition());
    }
    dead.add(member);
  }

  /** Every interval of {@code partition}, closed and open, in start order. */
  synchronized List<Interval> of(int partition) {
    List<Interval> out = new ArrayList<>();
    closed.stream().filter(i -> i.partition() == partition).forEach(out::add);
    open.values()
        .forEach(
            m -> {
              if (m.containsKey(partition)) {
                out.add(m.get(partition));
              }
            });
    out.sort(Comparator.comparingLong(Interval::from));
    return out;
  }

  /**
   * The violations: overlapping owners of a partition, tokens that did not grow, callbacks out of
   * order.
   */
  synchronized List<String> violations(int n) {
    List<String> out = new ArrayList<>(misuse);
    for (int k = 0; k < n; k++) {
      List<Interval> in = of(k);
      for (int j = 1; j < in.size(); j++) {
        Interval a = in.get(j - 1);
        Interval b = in.get(j);
        if (b.from() < a.to()) {
          out.add(
              "partition "
                  + k
                  + ": "
                  + b.member()
                  + " (token "
                  + b.token()
                  + ") owned it while "
                  + a.member()
                  + " (token "
                  + a.token()
                  + ") still did");
        }
        if (b.token() < a.token()) {
          out.add("partition " + k + ": token went from " + a.token() + " to " + b.token());
        }
      }
    }
    return out;
  }
}
