package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.RegisterWrite;
import io.leasehold.jepsen.history.Validity;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Election: on each election name ({@code election/...}), leaders' client-side validity never
 * overlaps, each new leader's token is larger than the one before, and the fenced register of the
 * name accepted no write with a token below one it had already seen (a deposed leader's write).
 */
public final class ElectionChecker implements Checker {
  static final String PREFIX = "election/";

  @Override
  public Verdict check(History h) {
    List<String> problems = new ArrayList<>();
    Map<String, List<Validity>> byName = new TreeMap<>();
    h.validities().stream()
        .filter(v -> v.name().startsWith(PREFIX))
        .forEach(v -> byName.computeIfAbsent(v.name(), n -> new ArrayList<>()).add(v));
    for (List<Validity> terms : byName.values()) {
      terms.sort(Comparator.comparingLong(Validity::fromNanos));
      Validity reach = null;
      Validity previous = null;
      for (Validity v : terms) {
        boolean sameTerm =
            previous != null
                && previous.token() == v.token()
                && previous.client().equals(v.client());
        if (reach != null
            && v.overlaps(reach)
            && !(v.token() == reach.token() && v.client().equals(reach.client()))) {
          problems.add(
              v.name()
                  + ": "
                  + v.client()
                  + " (token "
                  + v.token()
                  + ") led from "
                  + v.fromNanos()
                  + " while "
                  + reach.client()
                  + " (token "
                  + reach.token()
                  + ") still led until "
                  + reach.untilNanos());
        }
        if (previous != null && !sameTerm && v.token() <= previous.token()) {
          problems.add(
              v.name()
                  + ": leader "
                  + v.client()
                  + " got token "
                  + v.token()
                  + ", not larger than its predecessor "
                  + previous.client()
                  + "'s "
                  + previous.token());
        }
        if (reach == null || v.untilNanos() > reach.untilNanos()) {
          reach = v;
        }
        previous = v;
      }
    }
    List<RegisterWrite> writes =
        new ArrayList<>(
            h.registerWrites().stream().filter(w -> w.resource().startsWith(PREFIX)).toList());
    writes.sort(Comparator.comparingLong(RegisterWrite::seq));
    Map<String, Long> highest = new HashMap<>();
    for (RegisterWrite w : writes) {
      long seen = highest.getOrDefault(w.resource(), 0L);
      if (w.accepted() && w.token() < seen) {
        problems.add(
            w.resource()
                + ": write "
                + w.seq()
                + " by deposed leader "
                + w.client()
                + " (token "
                + w.token()
                + ") was accepted after token "
                + seen);
      }
      highest.put(w.resource(), Math.max(seen, w.token()));
    }
    int terms = byName.values().stream().mapToInt(List::size).sum();
    return Verdict.of(
        "election",
        problems,
        terms
            + " leadership terms on "
            + byName.size()
            + " elections, "
            + writes.size()
            + " fenced writes");
  }
}
