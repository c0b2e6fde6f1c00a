package io.leasehold.client;

import java.util.List;
import java.util.Optional;

/**
 * One node's own view of the cluster ({@code Cluster/Status} of the node asked); {@link LeaseholdClient#clusterStatus()} asks every member.
 *
 * @param role LEADER, FOLLOWER, CANDIDATE or LISTENER
 */
public record NodeStatus(String nodeId, String role, long term, Optional<String> leaderId,
                            Optional<String> leaderClientAddress, long commitIndex, long appliedIndex,
                            List<ClusterMember> members) {
  /**
   * Checks the fields and copies the members.
   *
   * @param role LEADER, FOLLOWER, CANDIDATE or LISTENER
   */
  public NodeStatus {
    members = List.copyOf(members);
  }
}
