package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.History;
import java.util.List;

/** A pure function from a history to a verdict: no clocks, no I/O, same answer every time. */
public interface Checker {
  Verdict check(History history);

  /** Every checker of a run, in report order. */
  static List<Checker> all() {
    return List.of(
        new FencingChecker(),
        new ExclusionChecker(),
        new LinearizabilityChecker(),
        new RenewalChecker(),
        new DurabilityChecker(),
        new AgreementChecker(),
        new WatchChecker(),
        new RegistryChecker(),
        new TransferChecker(),
        new AllOrNothingChecker(),
        new ElectionChecker(),
        new PartitionChecker("partitions/"),
        new LivenessChecker());
  }

  /**
   * The checkers of a run on a cluster with lease groups (docs/design/multi-raft.md): tokens are
   * checked per namespace. The watch checker stays: its watchers follow one namespace, whose events
   * and revisions are one group's; the watches of every name are judged per namespace.
   */
  static List<Checker> withLeaseGroups() {
    List<Checker> checkers =
        new java.util.ArrayList<>(
            all().stream()
                .map(c -> c instanceof FencingChecker ? FencingChecker.perNamespace() : c)
                .toList());
    checkers.add(new AcrossWatchChecker());
    return List.copyOf(checkers);
  }

  /** As {@link #withLeaseGroups()}, on a run whose namespaces move between the lease groups. */
  static List<Checker> withMoves() {
    List<Checker> checkers = new java.util.ArrayList<>(withLeaseGroups());
    checkers.add(new MoveChecker());
    return List.copyOf(checkers);
  }
}
