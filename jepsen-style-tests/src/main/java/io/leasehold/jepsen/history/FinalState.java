package io.leasehold.jepsen.history;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the cluster reports once every fault has healed and every node has restarted from its
 * data dir: per name the live lease and the ended ones (Admin/History), per namespace the policy
 * value the policy workload writes. Read with linearizable reads.
 */
public record FinalState(Map<String, Optional<Held>> current, Map<String, List<Ended>> ended, Map<String, Long> policyValues,
    boolean read) {
  public record Held(String holder, long token) {}

  public record Ended(long token, String reason) {}

  public FinalState {
    current = Map.copyOf(Objects.requireNonNull(current, "current"));
    ended = Map.copyOf(Objects.requireNonNull(ended, "ended"));
    policyValues = Map.copyOf(Objects.requireNonNull(policyValues, "policyValues"));
  }

  /** No final read was made (the run ended before it). */
  public static FinalState none() {
    return new FinalState(Map.of(), Map.of(), Map.of(), false);
  }
}
