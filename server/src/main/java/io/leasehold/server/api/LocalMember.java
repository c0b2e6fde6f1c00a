package io.leasehold.server.api;

import io.leasehold.server.admin.ClusterAdmin;
import io.leasehold.server.auth.Caller;
import java.util.Optional;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;

/** What the Cluster service needs of the node it runs on: its Raft view, its members' addresses, its controls. */
public interface LocalMember {
  String id();

  RaftServer.Division division();

  /** The gRPC API address of a member of the current configuration, if known. */
  Optional<String> clientAddress(RaftPeer peer);

  /** The gRPC API address of a member by id, if known. */
  Optional<String> clientAddressOf(String memberId);

  /** The client address of the leader this node knows of, for redirect hints. */
  Optional<String> leaderClientAddress();

  /** Membership, leadership transfer and snapshots. */
  ClusterAdmin admin();

  /** Records a cluster action, with its outcome, in the audit history. */
  void audit(Caller caller, String action, String target, String outcome, String detail);
}
