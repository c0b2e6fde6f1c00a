package io.leasehold.cli.view;

import io.leasehold.cli.Human;
import io.leasehold.cli.Json;
import io.leasehold.cli.Table;
import io.leasehold.client.ClusterMember;
import io.leasehold.client.ClusterStatus;
import io.leasehold.client.NodeStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Each node as it answered on its own ({@code endpoint health|status}), as JSON and as table rows.
 */
public final class EndpointView {
  private EndpointView() {}

  public static final List<String> HEALTH_COLUMNS =
      List.of("ENDPOINT", "ID", "HEALTHY", "TOOK", "ERROR");
  public static final List<String> STATUS_COLUMNS =
      List.of("ENDPOINT", "ID", "ROLE", "TERM", "LEADER", "COMMIT", "APPLIED");
  public static final List<String> STATUS_WIDE_COLUMNS =
      List.of("LEADER ADDRESS", "MEMBERS", "TOOK", "ERROR");

  /**
   * One node's answer: its status, or why it gave none.
   *
   * @param endpoint its client address
   * @param id its member id, as the node or the cluster's configuration says (empty if neither did)
   * @param status what it answered
   * @param error why it did not answer
   * @param took how long the call took
   */
  public record Answer(
      String endpoint,
      Optional<String> id,
      Optional<NodeStatus> status,
      Optional<String> error,
      Duration took) {
    public boolean answered() {
      return status.isPresent();
    }
  }

  /** The node that answered as leader (with the highest term, should two claim it). */
  public static Optional<NodeStatus> leader(List<Answer> answers) {
    return answers.stream()
        .flatMap(a -> a.status().stream())
        .filter(s -> s.role().equals("LEADER"))
        .max((a, b) -> Long.compare(a.term(), b.term()));
  }

  /**
   * Why a node is not healthy, or empty if it is: it answered, follows a leader, is in the term of
   * the leader that answered (if one did), and has at most {@link ClusterStatus#HEALTHY_LAG}
   * entries to apply (against that leader's commit index, else its own).
   */
  public static Optional<String> problem(Answer a, Optional<NodeStatus> leader) {
    if (a.status().isEmpty()) {
      return Optional.of(a.error().orElse("no answer"));
    }
    NodeStatus s = a.status().get();
    if (s.leaderId().isEmpty()) {
      return Optional.of("no leader (" + s.role() + ", term " + s.term() + ")");
    }
    if (leader.isPresent() && s.term() != leader.get().term()) {
      return Optional.of("term " + s.term() + ", the leader's is " + leader.get().term());
    }
    long commit = leader.map(NodeStatus::commitIndex).orElse(s.commitIndex());
    long lag = commit - s.appliedIndex();
    if (lag > ClusterStatus.HEALTHY_LAG) {
      return Optional.of(lag + " committed entries not yet applied");
    }
    return Optional.empty();
  }

  public static Map<String, Object> healthJson(Answer a, Optional<String> problem) {
    return Json.object(
        "endpoint", a.endpoint(),
        "id", a.id().orElse(null),
        "healthy", problem.isEmpty(),
        "tookMs", a.took().toMillis(),
        "error", problem.orElse(null));
  }

  public static void healthRow(Table t, Answer a, Optional<String> problem) {
    t.row(
        a.endpoint(),
        a.id().orElse("-"),
        problem.isEmpty() ? "yes" : "no",
        Human.duration(a.took()),
        problem.orElse("-"));
  }

  public static Map<String, Object> statusJson(Answer a) {
    Optional<NodeStatus> s = a.status();
    return Json.object(
        "endpoint", a.endpoint(),
        "id", a.id().orElse(null),
        "role", s.map(NodeStatus::role).orElse("UNREACHABLE"),
        "term", s.map(NodeStatus::term).orElse(null),
        "leader", s.flatMap(NodeStatus::leaderId).orElse(null),
        "leaderAddress", s.flatMap(NodeStatus::leaderClientAddress).orElse(null),
        "commitIndex", s.map(NodeStatus::commitIndex).orElse(null),
        "appliedIndex", s.map(NodeStatus::appliedIndex).orElse(null),
        "members", s.map(n -> n.members().stream().map(ClusterMember::id).toList()).orElse(null),
        "tookMs", a.took().toMillis(),
        "error", a.error().orElse(null));
  }

  public static Table statusTable(boolean wide) {
    List<String> headers = new ArrayList<>(STATUS_COLUMNS);
    if (wide) {
      headers.addAll(STATUS_WIDE_COLUMNS);
    }
    return Table.of(headers);
  }

  public static void statusRow(Table t, Answer a, boolean wide) {
    Optional<NodeStatus> s = a.status();
    List<String> cells =
        new ArrayList<>(
            List.of(
                a.endpoint(),
                a.id().orElse("-"),
                s.map(NodeStatus::role).orElse("UNREACHABLE"),
                s.map(n -> "" + n.term()).orElse("-"),
                s.flatMap(NodeStatus::leaderId).orElse("-"),
                s.map(n -> "" + n.commitIndex()).orElse("-"),
                s.map(n -> "" + n.appliedIndex()).orElse("-")));
    if (wide) {
      cells.addAll(
          List.of(
              s.flatMap(NodeStatus::leaderClientAddress).orElse("-"),
              s.map(n -> String.join(",", n.members().stream().map(ClusterMember::id).toList()))
                  .filter(m -> !m.isEmpty())
                  .orElse("-"),
              Human.duration(a.took()),
              a.error().orElse("-")));
    }
    t.row(cells);
  }
}
