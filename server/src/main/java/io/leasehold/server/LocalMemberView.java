package io.leasehold.server;

import io.leasehold.server.admin.ClusterAdmin;
import io.leasehold.server.api.LocalMember;
import io.leasehold.server.auth.Caller;
import io.leasehold.server.auth.NodeAuth;
import java.util.Optional;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;

/** The node as the Cluster service sees it: its Raft division, members' addresses, admin controls and audit. */
final class LocalMemberView implements LocalMember {
  private final NodeConfig config;
  private final NodeRaft raft;
  private final ClusterAdmin admin;
  private final NodeAuth auth;

  LocalMemberView(NodeConfig config, NodeRaft raft, ClusterAdmin admin, NodeAuth auth) {
    this.config = config;
    this.raft = raft;
    this.admin = admin;
    this.auth = auth;
  }

  @Override
  public String id() {
    return config.id();
  }

  @Override
  public RaftServer.Division division() {
    return raft.division();
  }

  @Override
  public Optional<String> clientAddress(RaftPeer peer) {
    return Members.clientAddress(peer, config);
  }

  @Override
  public Optional<String> clientAddressOf(String memberId) {
    return raft.clientAddressOf(memberId);
  }

  @Override
  public Optional<String> leaderClientAddress() {
    return raft.leaderClientAddress();
  }

  @Override
  public ClusterAdmin admin() {
    return admin;
  }

  @Override
  public void audit(Caller caller, String action, String target, String outcome, String detail) {
    auth.record(caller, action, target, outcome, detail);
  }
}
