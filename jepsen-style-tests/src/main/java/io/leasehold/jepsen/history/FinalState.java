package io.leasehold.jepsen.history;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * What the cluster reports once every fault has healed and every node has restarted from its data
 * dir: per name the live lease and the ended ones (Admin/History), per namespace the policy value
 * the policy workload writes. Read with linearizable reads.
 */
public record FinalState(
    Map<String, Optional<Held>> current,
    Map<String, List<Ended>> ended,
    Map<String, Long> policyValues,
    boolean read,
    List<NodeView> nodes) {
  public record Held(String holder, long token) {}

  public record Ended(long token, String reason) {}

  /**
   * What one node alone answered, read after the others with linearizable reads sent to it only:
   * per name the tokens it knows (the live lease's and the ended ones'). Empty {@code tokens} and a
   * {@code failure} when the node could not be read.
   */
  public record NodeView(String node, Map<String, Set<Long>> tokens, Optional<String> failure) {
    public NodeView {
      Objects.requireNonNull(node, "node");
      tokens = Map.copyOf(Objects.requireNonNull(tokens, "tokens"));
      Objects.requireNonNull(failure, "failure");
    }
  }

  public FinalState(
      Map<String, Optional<Held>> current,
      Map<String, List<Ended>> ended,
      Map<String, Long> policyValues,
      boolean read) {
    this(current, ended, policyValues, read, List.of());
  }

  public FinalState {
    current = Map.copyOf(Objects.requireNonNull(current, "current"));
    ended = Map.copyOf(Objects.requireNonNull(ended, "ended"));
    policyValues = Map.copyOf(Objects.requireNonNull(policyValues, "policyValues"));
    nodes = List.copyOf(Objects.requireNonNull(nodes, "nodes"));
  }

  /** No final read was made (the run ended before it). */
  public static FinalState none() {
    return new FinalState(Map.of(), Map.of(), Map.of(), false);
  }
}
