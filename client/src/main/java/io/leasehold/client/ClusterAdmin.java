package io.leasehold.client;

import io.leasehold.client.internal.ClientCore;
import io.leasehold.client.internal.ClusterCalls;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The operator's side of the cluster: status, membership, leadership and snapshots ({@code
 * client.cluster()}). Each call may be retried safely: adding a member already there or removing
 * one that is gone changes nothing. Membership changes wait for a new member to catch up with the
 * leader, so they get a minute per attempt rather than the client's attempt timeout.
 */
public final class ClusterAdmin {
  private final ClusterCalls calls;

  ClusterAdmin(ClientCore core) {
    this.calls = new ClusterCalls(core);
  }

  /**
   * The status of the node this client reads from.
   *
   * @return completes with the node's status
   */
  public CompletableFuture<NodeStatus> status() {
    return calls.status();
  }

  /**
   * The status of the node at {@code clientAddress}, as it answers for itself: one attempt at that
   * node only, bounded by the client's attempt timeout, never retried on another node (a health
   * check of one node, as {@code leasehold endpoint} does).
   *
   * @param clientAddress the node's client address ({@code host:port})
   * @return completes with the node's status; fails with {@link ClusterUnavailableException} if
   *     that node did not answer in time, {@link AccessDeniedException} if it refused the caller
   */
  public CompletableFuture<NodeStatus> status(String clientAddress) {
    return calls.status(clientAddress);
  }

  /**
   * Adds a member. Start its node first in join mode ({@code leasehold server --join}); it catches
   * up from the leader by log or snapshot. Returns the configuration after the change.
   *
   * @param id the new member's id
   * @param peerAddress its Raft address ({@code host:port})
   * @param clientAddress its client address ({@code host:port})
   * @return completes with the members after the change
   */
  public CompletableFuture<List<ClusterMember>> addMember(
      String id, String peerAddress, String clientAddress) {
    return calls.addMember(id, peerAddress, clientAddress);
  }

  /**
   * Removes a member; returns the configuration after the change.
   *
   * @param id the id of the member to remove
   * @return completes with the members after the change
   */
  public CompletableFuture<List<ClusterMember>> removeMember(String id) {
    return calls.removeMember(id);
  }

  /**
   * Changes the members of one lease group, where lease groups sit on subsets of the nodes: adds
   * each of {@code add} (nodes that are members of the cluster already), each brought up to date
   * before it counts, then removes each of {@code remove}, which drops its replica and serves the
   * group through its members. To replace a failed member, add another node and remove it in one
   * call. Each step is idempotent: repeat a call that failed part-way. With neither, returns the
   * group's members.
   *
   * @param group the lease group, 1 or more
   * @param add ids of members of the cluster to add to the group
   * @param remove ids of the group's members to remove from it
   * @return completes with the group's members after the change; fails with {@link
   *     InvalidRequestException} naming the field for a group or id the cluster lacks, and with a
   *     {@link LeaseholdException} of code {@code FAILED_PRECONDITION} where every lease group sits
   *     on every node
   */
  public CompletableFuture<List<ClusterMember>> setGroupMembers(
      int group, List<String> add, List<String> remove) {
    return calls.setGroupMembers(group, add, remove);
  }

  /**
   * Hands leadership to {@code id}; returns the new leader's id.
   *
   * @param id the id of the member to hand leadership to
   * @return completes with the new leader's id
   */
  public CompletableFuture<String> transferLeadership(String id) {
    return calls.transferLeadership(id);
  }

  /**
   * Hands leadership to another member, whichever the cluster picks; returns the new leader's id.
   *
   * @return completes with the new leader's id
   */
  public CompletableFuture<String> transferLeadership() {
    return calls.transferLeadership();
  }

  /**
   * Moves a namespace to another lease group, online: every lease keeps its token and holder, and
   * tokens of its names keep increasing; writes to it wait while it moves. Asking again for the
   * same move waits for it, or answers at once if it is over.
   *
   * @param namespace the namespace (the part of names before the first '/')
   * @param toGroup the lease group it goes to, 1 or more
   * @return completes once the destination serves it; fails with {@link InvalidRequestException} if
   *     it cannot move there, and with a {@link LeaseholdException} of code {@code
   *     FAILED_PRECONDITION} if the move was abandoned (a group refused it; it stays where it was)
   */
  public CompletableFuture<NamespaceMove> moveNamespace(String namespace, int toGroup) {
    return calls.moveNamespace(namespace, toGroup);
  }

  /**
   * Takes a snapshot on the node this client reads from (each node snapshots its own state).
   *
   * @return completes with the snapshot taken
   */
  public CompletableFuture<SnapshotResult> takeSnapshot() {
    return calls.takeSnapshot();
  }
}
