package io.leasehold.server.raft;

import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.statemachine.core.LeaseCore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * The node's one door into consensus. Everything outside this package that needs the replicated
 * log, the members or the node's role sees it through this interface, in the node's own types; only
 * this package knows Raft's. Futures fail with the node's own exceptions ({@link
 * ConsensusException} and its kinds), or with what was never Raft's (bad input, overload, a plain
 * I/O failure) as it was.
 */
public interface Consensus {
  /** This node's member id. */
  String selfId();

  // ---- the log ----

  /**
   * Replicates a command through whichever node leads and completes with the reply of its
   * application.
   */
  CompletableFuture<LogReply> propose(LogCommand command);

  /**
   * Proposes to this node only; fails with {@link ConsensusUnavailableException} unless it leads.
   */
  CompletableFuture<LogReply> proposeHere(LogCommand command);

  /**
   * A read on this node: linearizable (answered once this node has applied a barrier proposed after
   * the read arrived) or, when {@code stale}, at once from what it has applied.
   */
  CompletableFuture<ReadReply> read(ReadQuery query, boolean stale);

  /**
   * Completes once this node has applied everything committed when it was called (a linearizable
   * read's barrier, with no read).
   */
  CompletableFuture<?> caughtUp();

  /**
   * Asks the leader (this node itself when it leads) for the lease deadlines its expiry ticker
   * keeps, which nothing in the log tells. Fails when no leader is known, or it cannot answer: it
   * predates the question, or has not started deciding expiry.
   */
  CompletableFuture<DeadlineReply> leaderDeadlines(DeadlineQuery query);

  /** The log format in force in this node's applied state. */
  int logFormat();

  // ---- role, term and members ----

  /** This node's own account: role, term, leader, commit and applied index, members. */
  Status status();

  /**
   * Every Raft group this node hosts: the meta group (number 0) first, then lease groups by number
   * (docs/design/multi-raft.md).
   */
  List<GroupStatus> groups();

  /**
   * The state of each lease group this node hosts, by number, as this node applied it: for the
   * node's metrics, which count leases in every group. Empty without lease groups.
   */
  default Map<Integer, LeaseCore> leaseGroupCores() {
    return Map.of();
  }

  /**
   * Whether this node applies the entries that change {@code name} (and so hears its events): it
   * hosts the group the name lives in.
   */
  default boolean appliesEntriesOf(String name) {
    return true;
  }

  /**
   * The lease groups this node serves through their members (lease groups on subsets of the nodes),
   * by number, as it last learned them; empty when it hosts every group it serves.
   */
  default List<GroupRoute> reachedGroups() {
    return List.of();
  }

  /** A lease group this node is not a member of: its leader and members as last learned. */
  record GroupRoute(
      int number, Optional<String> leaderId, List<String> members, List<String> namespaces) {}

  /**
   * With lease groups: the meta group's index of the last change to where namespaces live, as this
   * node applied it; 0 without lease groups.
   */
  default long placementVersion() {
    return 0;
  }

  /**
   * What replication cost this node since it started: AppendEntries requests (heartbeats included)
   * received from a leader and their bytes as serialized, and the flushes of its Raft log to disk
   * (-1 when unknown).
   */
  Replication replication();

  /** What the health check judges: contact with the leader or, on a leader, with a majority. */
  Liveness liveness();

  boolean isLeader();

  /** The highest log index this node knows committed. */
  long commitIndex();

  /** The leader this node knows of. */
  Optional<String> leaderId();

  /** The client address of the leader this node knows of, for redirect hints. */
  Optional<String> leaderClientAddress();

  /** The gRPC API address of a member, from the current configuration or {@code --peers}. */
  Optional<String> clientAddressOf(String memberId);

  // ---- membership, leadership, snapshots ----

  /** Adds a member (started in join mode); completes with the configuration after the change. */
  CompletableFuture<List<Member>> addMember(String id, String peerAddress, String clientAddress);

  /** Removes a member; completes with the configuration after the change. */
  CompletableFuture<List<Member>> removeMember(String id);

  /**
   * Changes lease group {@code group}'s members where lease groups sit on subsets of the nodes:
   * adds each of {@code add} (members of the cluster), then removes each of {@code remove};
   * completes with the group's members and leader after the change.
   */
  CompletableFuture<GroupMembers> setGroupMembers(int group, List<String> add, List<String> remove);

  /**
   * Asks the leader to hand over to {@code id} (another member when empty); completes with the new
   * leader's id.
   */
  CompletableFuture<String> transferLeadership(Optional<String> id, Duration timeout);

  /**
   * Moves a namespace to lease group {@code toGroup} (docs/design/multi-raft.md, "Moving a
   * namespace"); completes with its placement once the destination serves it, or fails with {@link
   * MoveAbandonedException} if the move was abandoned.
   */
  CompletableFuture<io.leasehold.proto.v1.PlacementResponse> moveNamespace(
      String namespace, int toGroup, Duration timeout);

  /**
   * Takes a snapshot on this node that holds every write acknowledged before it was asked for;
   * fails with {@link NothingToSnapshotException} before the first write.
   */
  CompletableFuture<Snapshot> takeSnapshot(Duration timeout);

  /**
   * Takes a snapshot of every group this node hosts, one after another: each lease group's in
   * number order, then the meta group's, each holding every write acknowledged in that group before
   * it was asked for. The meta group comes last so that its placement table knows every namespace
   * the lease groups' snapshots adopted. A lease group that has applied no write has no state and
   * is left out. With no lease groups, the meta group's snapshot alone.
   */
  CompletableFuture<List<GroupSnapshot>> takeGroupSnapshots(Duration timeout);

  /**
   * As {@link #takeGroupSnapshots(Duration)}, of the groups named only (0: the meta group; lease
   * groups this node hosts), lease groups first: where lease groups sit on subsets of the nodes, a
   * backup asks a member of each. Refused while a move is under way, or if the meta group's
   * placement version is not {@code placementVersion} (unless 0) before each snapshot.
   */
  CompletableFuture<List<GroupSnapshot>> takeGroupSnapshots(
      Duration timeout, List<Integer> groups, long placementVersion);

  /** How many nodes each lease group sat on when the cluster formed; 0: every node. */
  default int leaseGroupSize() {
    return 0;
  }

  /**
   * Before a clean stop: hands every group this node leads to a caught-up follower, waiting at most
   * {@code bound}; a group not handed over elects once this node stops, as it would have.
   *
   * @return each group handed over (group UUID) and its new leader
   */
  Map<String, String> handOverLeadership(Duration bound);

  /**
   * A probe that asks other members for their own account, over the peer port; the caller closes
   * it.
   */
  PeerProbe newPeerProbe();

  // ---- events ----

  /**
   * Tells {@code listener} of what happens to this node's consensus; called on consensus threads,
   * must return quickly.
   */
  void listen(Listener listener);

  /** What happens to this node's consensus. */
  interface Listener {
    /** A new leader (or none: an empty id) in {@code term}. */
    default void leaderChanged(String leaderId, long term) {}

    /** The members of the configuration changed. */
    default void membersChanged(List<String> memberIds) {}
  }

  // ---- the node's own types ----

  enum Role {
    LEADER,
    FOLLOWER,
    CANDIDATE,
    LISTENER,
    UNKNOWN
  }

  /** A member of the configuration: its id, Raft address and, if known, gRPC API address. */
  record Member(String id, String peerAddress, Optional<String> clientAddress) {}

  /** A lease group's members, and its leader if one is known. */
  record GroupMembers(List<Member> members, Optional<String> leaderId) {}

  /** This node's own account of its consensus state. */
  record Status(
      String groupId,
      Role role,
      long term,
      Optional<String> leaderId,
      long commitIndex,
      long appliedIndex,
      List<Member> members) {}

  /** Replication's costs on this node since it started ({@link #replication}). */
  record Replication(long appendRequests, long appendBytes, long logFlushes) {}

  /**
   * One Raft group as this node sees it.
   *
   * @param number 0 for the meta group, 1..N for lease groups
   * @param priorities each member's election priority, by member id, in configuration order
   */
  record GroupStatus(
      int number,
      String groupId,
      Role role,
      long term,
      Optional<String> leaderId,
      long commitIndex,
      long appliedIndex,
      Map<String, Integer> priorities,
      List<String> namespaces,
      long globalVersion) {}

  /**
   * What the health check judges.
   *
   * @param followers on a leader that has started its appenders, each follower's progress; empty
   *     otherwise
   * @param leaderContactMillis on a follower that has heard of a leader, how long since it last did
   * @param groupSize the members of the group this node started with or has since learned
   */
  record Liveness(
      boolean alive,
      Role role,
      boolean leaderReady,
      Optional<String> leaderId,
      long commitIndex,
      long appliedIndex,
      int groupSize,
      Optional<List<Follower>> followers,
      OptionalLong leaderContactMillis) {}

  /**
   * A follower as its leader sees it; {@code matchIndex} is -1 until it first answers this leader,
   * or when unknown.
   */
  record Follower(String id, long matchIndex, long lastContactMillis) {}

  /** A snapshot on this node's disk; {@code md5} is empty when none was recorded. */
  record Snapshot(long term, long index, Path file, String md5) {}

  /** A group's snapshot: group 0 is the meta group, 1 and up the lease groups. */
  record GroupSnapshot(int group, String groupId, Snapshot snapshot) {}

  /** Another member's own account of itself, as it answered a probe. */
  record MemberReport(
      String role,
      long term,
      long commitIndex,
      long appliedIndex,
      String leaderId,
      boolean storageHealthy) {}
}
