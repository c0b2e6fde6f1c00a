package io.leasehold.server.raft;

import io.leasehold.server.NodeConfig;
import io.leasehold.server.Peer;
import java.util.Optional;
import org.apache.ratis.protocol.RaftPeer;

/**
 * How a member's gRPC API address travels with the Raft configuration. Ratis keeps no free-form
 * data per peer, and its own client and admin addresses must stay its peer port (the node's Raft
 * client uses them), so the API address rides in the data-stream address, which Leasehold does not
 * use (Ratis's DataStream is off). Members from {@code --peers} are found there too, and in the
 * node's own configuration for groups formed before addresses travelled this way.
 */
public final class Members {
  private Members() {}

  public static RaftPeer raftPeer(Peer p) {
    return raftPeer(p.id(), p.peerAddress(), p.clientAddress());
  }

  public static RaftPeer raftPeer(String id, String peerAddress, String clientAddress) {
    return RaftPeer.newBuilder()
        .setId(id)
        .setAddress(peerAddress)
        .setDataStreamAddress(clientAddress)
        .build();
  }

  /** The gRPC API address of a member of the current configuration, if known. */
  public static Optional<String> clientAddress(RaftPeer peer, NodeConfig config) {
    String carried = peer.getDataStreamAddress();
    if (carried != null && !carried.isBlank()) {
      return Optional.of(carried);
    }
    return config.peer(peer.getId().toString()).map(Peer::clientAddress);
  }
}
