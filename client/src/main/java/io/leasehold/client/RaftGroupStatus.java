package io.leasehold.client;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One Raft group as a member that hosts it sees it ({@link MemberStatus#groups()}): the meta group
 * (number 0) that every cluster has, and lease groups 1..N on a cluster formed with more than one
 * (docs/design/multi-raft.md in the project's sources).
 *
 * @param number 0 for the meta group, 1..N for lease groups
 * @param groupId the Raft group's id
 * @param role the member's role in this group
 * @param term the group's term as the member knows it
 * @param leaderId the group's leader as the member knows it
 * @param commitIndex the member's commit index in this group
 * @param appliedIndex the member's applied index in this group
 * @param priorities each member's election priority, by member id, in configuration order: a leader
 *     hands leadership to a caught-up member of higher priority
 * @param namespaces the namespaces placed on this group, sorted, as the member has applied the
 *     placement table (the meta group also holds every namespace placed nowhere, not listed)
 * @param globalVersion the version of the policies, bans and roles the group holds on the member:
 *     the meta group's last change to them, or the meta group's version a lease group copied last
 *     (a lease group below the meta group has not taken the newest change yet); 0 from a server
 *     that predates it
 */
public record RaftGroupStatus(
    int number,
    String groupId,
    MemberRole role,
    long term,
    Optional<String> leaderId,
    long commitIndex,
    long appliedIndex,
    Map<String, Integer> priorities,
    List<String> namespaces,
    long globalVersion) {
  /**
   * Checks that every field is given and copies the priorities, keeping their order.
   *
   * @param number 0 for the meta group, 1..N for lease groups
   * @param groupId the Raft group's id
   * @param role the member's role in this group
   * @param term the group's term as the member knows it
   * @param leaderId the group's leader as the member knows it
   * @param commitIndex the member's commit index in this group
   * @param appliedIndex the member's applied index in this group
   * @param priorities each member's election priority, by member id, in configuration order
   * @param namespaces the namespaces placed on this group, sorted
   * @param globalVersion the version of the policies, bans and roles the group holds
   */
  public RaftGroupStatus {
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(leaderId, "leaderId");
    priorities =
        Collections.unmodifiableMap(
            new LinkedHashMap<>(Objects.requireNonNull(priorities, "priorities")));
    namespaces = List.copyOf(Objects.requireNonNull(namespaces, "namespaces"));
  }

  /**
   * A group as a server that predates global versions reports it (version 0).
   *
   * @param number 0 for the meta group, 1..N for lease groups
   * @param groupId the Raft group's id
   * @param role the member's role in this group
   * @param term the group's term as the member knows it
   * @param leaderId the group's leader as the member knows it
   * @param commitIndex the member's commit index in this group
   * @param appliedIndex the member's applied index in this group
   * @param priorities each member's election priority, by member id, in configuration order
   * @param namespaces the namespaces placed on this group, sorted
   */
  public RaftGroupStatus(
      int number,
      String groupId,
      MemberRole role,
      long term,
      Optional<String> leaderId,
      long commitIndex,
      long appliedIndex,
      Map<String, Integer> priorities,
      List<String> namespaces) {
    this(
        number,
        groupId,
        role,
        term,
        leaderId,
        commitIndex,
        appliedIndex,
        priorities,
        namespaces,
        0);
  }

  /**
   * Whether this is the meta group, which every cluster has.
   *
   * @return whether its number is 0
   */
  public boolean meta() {
    return number == 0;
  }
}
