package io.leasehold.client;

import java.util.List;
import java.util.Optional;

/**
 * One node's own view of the cluster ({@code Cluster/Status} of the node asked); {@link
 * LeaseholdClient#clusterStatus()} asks every member.
 *
 * @param nodeId the node that answered
 * @param role LEADER, FOLLOWER, CANDIDATE or LISTENER
 * @param term its current term
 * @param leaderId the leader it follows, if it knows one
 * @param leaderClientAddress that leader's client address, if known
 * @param commitIndex its commit index
 * @param appliedIndex its applied index
 * @param members the Raft configuration as it knows it
 */
public record NodeStatus(
    String nodeId,
    String role,
    long term,
    Optional<String> leaderId,
    Optional<String> leaderClientAddress,
    long commitIndex,
    long appliedIndex,
    List<ClusterMember> members) {
  /**
   * Copies the members.
   *
   * @param nodeId the node that answered
   * @param role LEADER, FOLLOWER, CANDIDATE or LISTENER
   * @param term its current term
   * @param leaderId the leader it follows, if it knows one
   * @param leaderClientAddress that leader's client address, if known
   * @param commitIndex its commit index
   * @param appliedIndex its applied index
   * @param members the Raft configuration as it knows it
   */
  public NodeStatus {
    members = List.copyOf(members);
  }
}
