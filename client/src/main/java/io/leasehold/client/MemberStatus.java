package io.leasehold.client;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One member of the cluster as it answered {@code Cluster/Status} itself ({@link
 * LeaseholdClient#clusterStatus()}).
 *
 * @param id the member's id
 * @param peerAddress its Raft address
 * @param clientAddress its client address (empty if the cluster does not know it)
 * @param role its Raft role; UNKNOWN if it did not answer
 * @param term its current term
 * @param leaderId the leader it follows; empty if it knows none or did not answer
 * @param commitIndex its commit index
 * @param appliedIndex its applied index
 * @param error why it did not answer, if it did not
 * @param groups every Raft group the member hosts, as it sees them: the meta group first, then
 *     lease groups by number; empty if it did not answer
 */
public record MemberStatus(
    String id,
    String peerAddress,
    String clientAddress,
    MemberRole role,
    long term,
    String leaderId,
    long commitIndex,
    long appliedIndex,
    Optional<String> error,
    List<RaftGroupStatus> groups) {
  /**
   * Checks that every field is given.
   *
   * @param id the member's id
   * @param peerAddress its Raft address
   * @param clientAddress its client address (empty if the cluster does not know it)
   * @param role its Raft role; UNKNOWN if it did not answer
   * @param term its current term
   * @param leaderId the leader it follows; empty if it knows none or did not answer
   * @param commitIndex its commit index
   * @param appliedIndex its applied index
   * @param error why it did not answer, if it did not
   * @param groups every Raft group the member hosts, as it sees them; empty if it did not answer
   */
  public MemberStatus {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(peerAddress, "peerAddress");
    Objects.requireNonNull(clientAddress, "clientAddress");
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(leaderId, "leaderId");
    Objects.requireNonNull(error, "error");
    groups = List.copyOf(Objects.requireNonNull(groups, "groups"));
  }

  /**
   * A member as a server without lease groups reports it: no groups listed.
   *
   * @param id the member's id
   * @param peerAddress its Raft address
   * @param clientAddress its client address (empty if the cluster does not know it)
   * @param role its Raft role; UNKNOWN if it did not answer
   * @param term its current term
   * @param leaderId the leader it follows; empty if it knows none or did not answer
   * @param commitIndex its commit index
   * @param appliedIndex its applied index
   * @param error why it did not answer, if it did not
   */
  public MemberStatus(
      String id,
      String peerAddress,
      String clientAddress,
      MemberRole role,
      long term,
      String leaderId,
      long commitIndex,
      long appliedIndex,
      Optional<String> error) {
    this(
        id,
        peerAddress,
        clientAddress,
        role,
        term,
        leaderId,
        commitIndex,
        appliedIndex,
        error,
        List.of());
  }

  /**
   * Whether the member answered.
   *
   * @return whether it answered; if not, {@link #error()} says why
   */
  public boolean reachable() {
    return error.isEmpty();
  }
}
