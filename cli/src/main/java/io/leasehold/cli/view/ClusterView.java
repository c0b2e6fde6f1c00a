package io.leasehold.cli.view;

import io.leasehold.cli.Json;
import io.leasehold.cli.Table;
import io.leasehold.client.ClusterStatus;
import io.leasehold.client.MemberRole;
import io.leasehold.client.MemberStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Cluster members as JSON and as a table. */
public final class ClusterView {
  private ClusterView() {}

  public static final List<String> COLUMNS =
      List.of("ID", "ADDRESS", "ROLE", "TERM", "COMMIT", "APPLIED", "LAG", "HEALTHY");
  public static final List<String> WIDE_COLUMNS = List.of("PEER ADDRESS", "LEADER", "ERROR");

  public static Map<String, Object> json(ClusterStatus s, MemberStatus m) {
    return Json.object(
        "id", m.id(),
        "address", m.clientAddress().isEmpty() ? null : m.clientAddress(),
        "peerAddress", m.peerAddress(),
        "role", m.reachable() ? role(m.role()) : "UNREACHABLE",
        "term", m.reachable() ? m.term() : null,
        "leader", m.leaderId().isEmpty() ? null : m.leaderId(),
        "commitIndex", m.reachable() ? m.commitIndex() : null,
        "appliedIndex", m.reachable() ? m.appliedIndex() : null,
        "lag", s.lag(m).orElse(null),
        "healthy", s.healthy(m),
        "error", m.error().orElse(null));
  }

  public static Table table(ClusterStatus s, boolean wide) {
    List<String> headers = new ArrayList<>(COLUMNS);
    if (wide) {
      headers.addAll(WIDE_COLUMNS);
    }
    Table t = Table.of(headers);
    for (MemberStatus m : s.members()) {
      List<String> cells =
          new ArrayList<>(
              List.of(
                  m.id(),
                  m.clientAddress(),
                  m.reachable() ? role(m.role()) : "UNREACHABLE",
                  m.reachable() ? "" + m.term() : "-",
                  m.reachable() ? "" + m.commitIndex() : "-",
                  m.reachable() ? "" + m.appliedIndex() : "-",
                  s.lag(m).map(String::valueOf).orElse("-"),
                  s.healthy(m) ? "yes" : "no"));
      if (wide) {
        cells.addAll(
            List.of(
                m.peerAddress(),
                m.leaderId().isEmpty() ? "-" : m.leaderId(),
                m.error().orElse("-")));
      }
      t.row(cells);
    }
    return t;
  }

  /**
   * What counts as a change to a live view ({@code cluster status --watch}): each member's role,
   * term, leader, health and error, not its indexes.
   */
  public static List<List<Object>> change(ClusterStatus s) {
    List<List<Object>> out = new ArrayList<>();
    for (MemberStatus m : s.members()) {
      out.add(
          List.of(
              m.id(),
              m.clientAddress(),
              m.reachable() ? role(m.role()) : "UNREACHABLE",
              m.term(),
              m.leaderId(),
              s.healthy(m),
              m.error().orElse("")));
    }
    return out;
  }

  static String role(MemberRole r) {
    return r.name();
  }
}
