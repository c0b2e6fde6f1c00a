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
}
