package io.leasehold.jepsen.nemesis;

/**
 * Moves leadership away from the current leader. The Cluster service has no leadership-transfer
 * call yet (it is being added with membership change); until then {@link PauseLeaderMover}
 * (or {@link RestartLeaderMover}) forces an election. A transfer-based mover plugs in here.
 */
public interface LeadershipMover {
  /** Moves leadership away from node {@code leader}; returns what it did. */
  String move(NemesisContext ctx, int leader);

  /** Undoes anything the moves left behind (a node still down). */
  default void settle(NemesisContext ctx) {}
}
