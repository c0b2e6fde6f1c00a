package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Validity;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Partition groups: per partition, no two members' ownership intervals overlap; assignments in time
 * order carry tokens that never go down (and grow when the owner changes); the fenced register
 * accepted tokens that never go down (a former owner's late write was refused), each an assigned
 * token of that partition.
 */
public final class PartitionChecker implements Checker {
  private final String prefix;

  public PartitionChecker(String prefix) {
    this.prefix = prefix;
  }

  @Override
  public Verdict check(History h) {
    List<String> problems = new ArrayList<>();
    int intervals = overlaps(h, problems);
    Map<String, List<Completed>> assigns = new TreeMap<>();
    List<Completed> writes = new ArrayList<>();
    Set<String> assigned = new HashSet<>();
    for (Completed c : h.completed()) {
      if (!c.invoke().key().startsWith(prefix)) {
        continue;
      }
      if (c.invoke().f().equals("assign")) {
        if (!c.ok()) {
          continue; // a callback in a "killed" member: the process is dead and acts on nothing
        }
        assigns.computeIfAbsent(c.invoke().key(), k -> new ArrayList<>()).add(c);
        assigned.add(c.invoke().key() + "#" + c.invoke().token().orElseThrow());
      } else if (c.invoke().f().equals("partition-write")) {
        writes.add(c);
      }
    }
    for (List<Completed> as : assigns.values()) {
      as.sort(Comparator.comparingLong(c -> c.completion().nanos()));
      for (int i = 1; i < as.size(); i++) {
        Completed a = as.get(i - 1);
        Completed b = as.get(i);
        long ta = a.invoke().token().orElseThrow();
        long tb = b.invoke().token().orElseThrow();
        boolean sameOwner = a.invoke().holder().equals(b.invoke().holder());
        if (tb < ta || tb == ta && !sameOwner) {
          problems.add(
              b.invoke().key()
                  + ": "
                  + b.completion()
                  + " was assigned token "
                  + tb
                  + " after "
                  + a.completion()
                  + " had "
                  + ta);
        }
      }
    }
    writes.sort(Comparator.comparingLong(c -> c.invoke().id()));
    Map<String, Completed> highest = new HashMap<>();
    int accepted = 0;
    for (Completed w : writes) {
      if (!w.completion().value().equals("ACCEPTED")) {
        continue;
      }
      accepted++;
      String name = w.invoke().key();
      long token = w.invoke().token().orElseThrow();
      Completed top = highest.get(name);
      if (top != null && token < top.invoke().token().orElseThrow()) {
        problems.add(
            name
                + ": the register accepted "
                + w.completion()
                + " after "
                + top.completion()
                + ": a former owner's write was not refused");
      }
      if (top == null || token > top.invoke().token().orElseThrow()) {
        highest.put(name, w);
      }
      if (!assigned.contains(name + "#" + token)) {
        problems.add(
            name
                + ": the register accepted "
                + w.completion()
                + " with a token never assigned for it");
      }
    }
    return Verdict.of(
        "partitions",
        problems,
        intervals
            + " ownership intervals on "
            + assigns.size()
            + " partitions; "
            + accepted
            + " of "
            + writes.size()
            + " fenced writes accepted");
  }

  /** Two members owning one partition at once. */
  private int overlaps(History h, List<String> problems) {
    Map<String, List<Validity>> byName = new TreeMap<>();
    h.validities().stream()
        .filter(v -> v.name().startsWith(prefix))
        .forEach(v -> byName.computeIfAbsent(v.name(), n -> new ArrayList<>()).add(v));
    int count = 0;
    for (List<Validity> vs : byName.values()) {
      count += vs.size();
      vs.sort(Comparator.comparingLong(Validity::fromNanos));
      Validity reach = null;
      for (Validity v : vs) {
        if (reach != null && v.overlaps(reach)) {
          problems.add(
              v.name()
                  + ": "
                  + v.client()
                  + " (token "
                  + v.token()
                  + ") owned it from "
                  + v.fromNanos()
                  + " while "
                  + reach.client()
                  + " (token "
                  + reach.token()
                  + ") did until "
                  + reach.untilNanos());
        }
        if (reach == null || v.untilNanos() > reach.untilNanos()) {
          reach = v;
        }
      }
    }
    return count;
  }
}
