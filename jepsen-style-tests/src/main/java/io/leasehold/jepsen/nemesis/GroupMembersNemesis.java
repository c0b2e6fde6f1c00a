package io.leasehold.jepsen.nemesis;

import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.GroupMember;
import io.leasehold.proto.v1.GroupRoute;
import io.leasehold.proto.v1.GroupStatus;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.MembershipResponse;
import io.leasehold.proto.v1.SetGroupMembersRequest;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A lease group's members changed where lease groups sit on subsets of the nodes, the way
 * docs/operations.md tells an operator to replace a member: {@code Cluster/SetGroupMembers} adds a
 * node that is not a member of a random lease group and removes a random member in one call,
 * through any node. The removed member drops its replica and serves the group through its members;
 * the added one is brought up to date before it counts. Heal makes the reverse change, so the group
 * ends as it began. Each step is idempotent, so a call that failed (a leader lost midway) is tried
 * again, and heal undoes whatever part of the change took effect.
 */
public final class GroupMembersNemesis implements Nemesis {
  private static final Duration CHANGE_WITHIN = Duration.ofSeconds(90);

  /** The change made by start, to undo: group, node added, node removed. */
  private record Change(int group, String added, String removed) {}

  private Change change;
  private final java.util.Optional<String> unsupported;

  /**
   * @param unsupported why this cluster's lease groups' members cannot be changed, if they cannot
   */
  public GroupMembersNemesis(java.util.Optional<String> unsupported) {
    this.unsupported = unsupported;
  }

  @Override
  public java.util.Optional<String> unsupportedReason() {
    return unsupported;
  }

  @Override
  public String kind() {
    return "membership";
  }

  @Override
  public String name() {
    return "group-members";
  }

  @Override
  public String start(NemesisContext ctx) {
    Map<Integer, List<String>> groups = groupMembers(ctx);
    List<Integer> numbers = new ArrayList<>(groups.keySet());
    int group = numbers.get(ctx.random().nextInt(numbers.size()));
    List<String> members = groups.get(group);
    List<String> others = new ArrayList<>();
    for (int i = 0; i < ctx.cluster().size(); i++) {
      String id = ctx.cluster().node(i).id();
      if (!members.contains(id)) {
        others.add(id);
      }
    }
    if (others.isEmpty()) {
      return "lease group " + group + " is on every node " + members + ": nothing to change";
    }
    String added = others.get(ctx.random().nextInt(others.size()));
    String removed = members.get(ctx.random().nextInt(members.size()));
    change = new Change(group, added, removed);
    MembershipResponse r = set(ctx, group, added, removed, "replace");
    return "lease group "
        + group
        + ": added "
        + added
        + " and removed "
        + removed
        + " (was "
        + members
        + "); members now "
        + ids(r);
  }

  @Override
  public String heal(NemesisContext ctx) {
    Change c = change;
    if (c == null) {
      return "nothing to undo";
    }
    MembershipResponse r = set(ctx, c.group(), c.removed(), c.added(), "restore");
    change = null;
    return "lease group "
        + c.group()
        + ": added "
        + c.removed()
        + " back and removed "
        + c.added()
        + "; members now "
        + ids(r);
  }

  private static MembershipResponse set(
      NemesisContext ctx, int group, String add, String remove, String what) {
    return ClusterCalls.retrying(
        ctx,
        what + " members of lease group " + group,
        -1,
        CHANGE_WITHIN,
        i ->
            ClusterGrpc.newBlockingStub(ctx.cluster().channel(i))
                .withDeadlineAfter(45, TimeUnit.SECONDS)
                .setGroupMembers(
                    SetGroupMembersRequest.newBuilder()
                        .setGroup(group)
                        .addAdd(add)
                        .addRemove(remove)
                        .build()));
  }

  /** Each lease group's members, as a node that answers knows them. */
  private static Map<Integer, List<String>> groupMembers(NemesisContext ctx) {
    return ClusterCalls.retrying(
        ctx,
        "read the lease groups' members",
        -1,
        CHANGE_WITHIN,
        i -> {
          StatusResponse s =
              ClusterGrpc.newBlockingStub(ctx.cluster().channel(i))
                  .withDeadlineAfter(5, TimeUnit.SECONDS)
                  .status(StatusRequest.getDefaultInstance());
          Map<Integer, List<String>> out = new TreeMap<>();
          for (GroupStatus g : s.getGroupsList()) {
            if (g.getNumber() > 0) {
              out.put(
                  g.getNumber(),
                  g.getMembersList().stream().map(GroupMember::getId).sorted().toList());
            }
          }
          for (GroupRoute r : s.getReachedGroupsList()) {
            out.put(r.getNumber(), r.getMemberIdsList().stream().sorted().toList());
          }
          if (out.isEmpty() || out.values().stream().anyMatch(List::isEmpty)) {
            throw new IllegalStateException(s.getId() + " does not know every group's members");
          }
          return out;
        });
  }

  private static String ids(MembershipResponse r) {
    return r.getMembersList().stream()
        .map(Member::getId)
        .sorted()
        .collect(Collectors.joining(",", "[", "]"));
  }
}
