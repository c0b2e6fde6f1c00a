package io.leasehold.server;

import io.leasehold.server.api.LocalMember;
import io.leasehold.server.auth.Caller;
import io.leasehold.server.auth.NodeAuth;
import io.leasehold.server.raft.Consensus;

/** The node as the Cluster service sees it: its consensus and audit. */
final class LocalMemberView implements LocalMember {
  private final NodeConfig config;
  private final Consensus consensus;
  private final NodeAuth auth;

  LocalMemberView(NodeConfig config, Consensus consensus, NodeAuth auth) {
    this.config = config;
    this.consensus = consensus;
    this.auth = auth;
  }

  @Override
  public String id() {
    return config.id();
  }

  @Override
  public Consensus consensus() {
    return consensus;
  }

  @Override
  public void audit(Caller caller, String action, String target, String outcome, String detail) {
    auth.record(caller, action, target, outcome, detail);
  }
}
