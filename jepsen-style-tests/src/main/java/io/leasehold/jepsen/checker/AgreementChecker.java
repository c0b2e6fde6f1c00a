package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.FinalState;
import io.leasehold.jepsen.history.History;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Replica agreement: after the final restart, each node read alone knows the same tokens for every
 * name (the live lease's and the ended ones'). Nothing writes after the restart, and each read is
 * linearizable, so a token one node knows and another does not means the replicas' states parted:
 * one applied entries the others did not, or skipped some.
 */
public final class AgreementChecker implements Checker {
  @Override
  public Verdict check(History h) {
    FinalState fin = h.finalState();
    List<FinalState.NodeView> read =
        fin.nodes().stream().filter(v -> v.failure().isEmpty()).toList();
    if (!fin.read() || read.size() < 2) {
      return Verdict.unknown(
          "agreement",
          "fewer than two nodes' own views were read: "
              + fin.nodes().stream()
                  .map(v -> v.node() + " " + v.failure().orElse("read"))
                  .toList());
    }
    List<String> problems = new ArrayList<>();
    FinalState.NodeView first = read.get(0);
    Set<String> names = new TreeSet<>();
    read.forEach(v -> names.addAll(v.tokens().keySet()));
    for (String name : names) {
      Set<Long> reference = first.tokens().getOrDefault(name, Set.of());
      for (FinalState.NodeView other : read.subList(1, read.size())) {
        Set<Long> theirs = other.tokens().getOrDefault(name, Set.of());
        if (!theirs.equals(reference)) {
          problems.add(
              "replicas disagree on "
                  + name
                  + ": "
                  + first.node()
                  + " alone knows "
                  + difference(reference, theirs)
                  + ", "
                  + other.node()
                  + " alone knows "
                  + difference(theirs, reference));
        }
      }
    }
    List<String> unread =
        fin.nodes().stream()
            .filter(v -> v.failure().isPresent())
            .map(v -> v.node() + ": " + v.failure().get())
            .toList();
    return Verdict.of(
        "agreement",
        problems,
        read.size()
            + " nodes agree on the tokens of "
            + names.size()
            + " names"
            + (unread.isEmpty() ? "" : "; not read: " + unread));
  }

  private static Set<Long> difference(Set<Long> a, Set<Long> b) {
    Set<Long> d = new TreeSet<>(a);
    d.removeAll(b);
    return d;
  }
}
