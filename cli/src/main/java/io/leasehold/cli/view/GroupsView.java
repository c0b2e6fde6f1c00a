package io.leasehold.cli.view;

import io.leasehold.cli.Json;
import io.leasehold.cli.Table;
import io.leasehold.client.ClusterStatus;
import io.leasehold.client.MemberRole;
import io.leasehold.client.MemberStatus;
import io.leasehold.client.RaftGroupStatus;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The cluster's Raft groups, from every member's own account ({@code leasehold cluster groups}): a
 * group's leader is the one a member reports leading it in the highest term, else the one the
 * members follow in the highest term.
 */
public final class GroupsView {
  private GroupsView() {}

  /** One group, put together from the members that host it. */
  public record Group(
      int number,
      String groupId,
      Optional<String> leader,
      long term,
      long commitIndex,
      Map<String, Integer> priorities,
      List<String> namespaces,
      Map<String, RaftGroupStatus> byMember) {}

  public static List<Group> groups(ClusterStatus s) {
    Map<Integer, Map<String, RaftGroupStatus>> byGroup = new TreeMap<>();
    for (MemberStatus m : s.members()) {
      for (RaftGroupStatus g : m.groups()) {
        byGroup.computeIfAbsent(g.number(), n -> new LinkedHashMap<>()).put(m.id(), g);
      }
    }
    List<Group> out = new ArrayList<>();
    byGroup.forEach(
        (number, views) -> {
          Comparator<RaftGroupStatus> byTerm = Comparator.comparingLong(RaftGroupStatus::term);
          RaftGroupStatus newest = views.values().stream().max(byTerm).orElseThrow();
          // The member that reports leading it in the highest term, else the leader the freshest
          // view names.
          Optional<Map.Entry<String, RaftGroupStatus>> leading =
              views.entrySet().stream()
                  .filter(e -> e.getValue().role() == MemberRole.LEADER)
                  .max(Map.Entry.comparingByValue(byTerm));
          RaftGroupStatus best = leading.map(Map.Entry::getValue).orElse(newest);
          out.add(
              new Group(
                  number,
                  newest.groupId(),
                  leading.map(Map.Entry::getKey).or(newest::leaderId),
                  best.term(),
                  best.commitIndex(),
                  newest.priorities(),
                  // The freshest table: a member that applied more placements lists more.
                  views.values().stream()
                      .map(RaftGroupStatus::namespaces)
                      .max(Comparator.comparingInt(List::size))
                      .orElse(List.of()),
                  views));
        });
    return out;
  }

  public static Map<String, Object> json(Group g) {
    List<Map<String, Object>> members = new ArrayList<>();
    g.priorities()
        .forEach(
            (id, priority) -> {
              RaftGroupStatus view = g.byMember().get(id);
              members.add(
                  Json.object(
                      "id",
                      id,
                      "priority",
                      priority,
                      "role",
                      view == null ? null : ClusterView.role(view.role()),
                      "appliedIndex",
                      view == null ? null : view.appliedIndex(),
                      "globalVersion",
                      view == null ? null : view.globalVersion()));
            });
    return Json.object(
        "number", g.number(),
        "kind", g.number() == 0 ? "meta" : "lease",
        "groupId", g.groupId(),
        "leader", g.leader().orElse(null),
        "term", g.term(),
        "commitIndex", g.commitIndex(),
        "namespaces", g.namespaces(),
        "members", members);
  }

  /**
   * {@code GROUP KIND LEADER TERM COMMIT MEMBERS (PRIORITY) NAMESPACES}, members as {@code
   * id(priority)}, namespaces comma-separated ({@code -} for none placed).
   */
  public static Table table(List<Group> groups) {
    Table t =
        Table.of("GROUP", "KIND", "LEADER", "TERM", "COMMIT", "MEMBERS (PRIORITY)", "NAMESPACES");
    for (Group g : groups) {
      List<String> members = new ArrayList<>();
      g.priorities().forEach((id, priority) -> members.add(id + "(" + priority + ")"));
      t.row(
          "" + g.number(),
          g.number() == 0 ? "meta" : "lease",
          g.leader().orElse("-"),
          "" + g.term(),
          "" + g.commitIndex(),
          String.join(" ", members),
          g.namespaces().isEmpty() ? "-" : String.join(",", g.namespaces()));
    }
    return t;
  }

  /** How many groups each member leads, members in the order the groups list them. */
  public static Map<String, Integer> leadership(List<Group> groups) {
    Map<String, Integer> out = new LinkedHashMap<>();
    for (Group g : groups) {
      g.priorities().keySet().forEach(id -> out.putIfAbsent(id, 0));
    }
    for (Group g : groups) {
      g.leader().ifPresent(id -> out.merge(id, 1, Integer::sum));
    }
    return out;
  }
}
