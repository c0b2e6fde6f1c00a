package io.leasehold.server.ui;

import java.util.concurrent.CompletableFuture;
import org.apache.ratis.protocol.GroupInfoReply;

/**
 * Asks another member for its own account of its Raft state: Ratis's group info (role, leader,
 * commit and applied index, storage health), over the peer port and its mutual TLS. This is how
 * any node's Cluster page shows every member, not only the leader's.
 */
public interface PeerProbe extends AutoCloseable {
  /** The member's answer, or a future that fails when it gives none within the probe's deadline. */
  CompletableFuture<GroupInfoReply> groupInfo(String memberId);

  @Override
  void close();
}
