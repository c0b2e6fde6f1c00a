package io.leasehold.server.raft;

import java.util.concurrent.CompletableFuture;

/**
 * Asks another member for its own account of its consensus state (role, leader, commit and applied
 * index, storage health), over the peer port and its mutual TLS. This is how any node's Cluster
 * page shows every member, not only the leader's.
 */
public interface PeerProbe extends AutoCloseable {
  /** The member's answer, or a future that fails when it gives none within the probe's deadline. */
  CompletableFuture<Consensus.MemberReport> report(String memberId);

  @Override
  void close();
}
