package io.leasehold.client;

import java.util.List;
import java.util.Optional;

/**
 * One node's view of the cluster ({@code Cluster/Status}).
 *
 * @param role LEADER, FOLLOWER, CANDIDATE or LISTENER
 */
public record ClusterStatus(String nodeId, String role, long term, Optional<String> leaderId,
                            Optional<String> leaderClientAddress, long commitIndex, long appliedIndex,
                            List<ClusterMember> members) {
  public ClusterStatus {
    members = List.copyOf(members);
  }
}
