package io.leasehold.client;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Every member of the cluster, each as it answered for itself ({@link
 * LeaseholdClient#clusterStatus()}).
 *
 * @param groupId the Raft group
 * @param members in the order the cluster lists them
 */
public record ClusterStatus(String groupId, List<MemberStatus> members) {
  /**
   * A member whose applied index trails the leader's commit index by more than this is not healthy.
   */
  public static final long HEALTHY_LAG = 1000;

  /**
   * Checks the fields and copies the members.
   *
   * @param groupId the Raft group
   * @param members in the order the cluster lists them
   */
  public ClusterStatus {
    Objects.requireNonNull(groupId, "groupId");
    members = List.copyOf(Objects.requireNonNull(members, "members"));
  }

  /**
   * The member that answered as leader (with the highest term, should two claim it).
   *
   * @return the leader, if one answered
   */
  public Optional<MemberStatus> leader() {
    return members.stream()
        .filter(m -> m.role() == MemberRole.LEADER)
        .max((a, b) -> Long.compare(a.term(), b.term()));
  }

  /**
   * How many committed entries {@code member} has yet to apply: the leader's commit index (the
   * highest any member reported, without a leader) minus the member's applied index. Absent if the
   * member did not answer.
   *
   * @param member a member of this status
   * @return entries yet to apply, if the member answered
   */
  public Optional<Long> lag(MemberStatus member) {
    if (!member.reachable()) {
      return Optional.empty();
    }
    long commit =
        leader()
            .map(MemberStatus::commitIndex)
            .orElse(
                members.stream()
                    .filter(MemberStatus::reachable)
                    .mapToLong(MemberStatus::commitIndex)
                    .max()
                    .orElse(0));
    return Optional.of(Math.max(0, commit - member.appliedIndex()));
  }

  /**
   * Answered, follows a leader of the current term, and lags by at most {@link #HEALTHY_LAG}
   * entries.
   *
   * @param member a member of this status
   * @return whether the member is healthy
   */
  public boolean healthy(MemberStatus member) {
    Optional<MemberStatus> leader = leader();
    return member.reachable()
        && leader.isPresent()
        && !member.leaderId().isEmpty()
        && member.term() == leader.get().term()
        && lag(member).orElse(Long.MAX_VALUE) <= HEALTHY_LAG;
  }
}
