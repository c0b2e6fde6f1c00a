package io.leasehold.server.api;

import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Peer;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;

/** This node's view of the cluster, from Ratis. */
public final class ClusterService extends ClusterGrpc.ClusterImplBase {
  private final LeaseholdNode node;

  public ClusterService(LeaseholdNode node) {
    this.node = node;
  }

  @Override
  public void status(StatusRequest request, StreamObserver<StatusResponse> response) {
    RaftServer.Division division = node.division();
    DivisionInfo info = division.getInfo();
    StatusResponse.Builder b = StatusResponse.newBuilder()
        .setId(node.id())
        .setGroupId(division.getGroup().getGroupId().getUuid().toString())
        .setRole(role(info))
        .setTerm(info.getCurrentTerm())
        .setCommitIndex(division.getRaftLog().getLastCommittedIndex())
        .setAppliedIndex(info.getLastAppliedIndex());
    RaftPeerId leader = info.getLeaderId();
    if (leader != null) {
      b.setLeaderId(leader.toString());
      node.config().peer(leader.toString()).ifPresent(p -> b.setLeaderClientAddress(p.clientAddress()));
    }
    for (RaftPeer peer : division.getGroup().getPeers()) {
      Member.Builder m = Member.newBuilder().setId(peer.getId().toString()).setPeerAddress(peer.getAddress());
      node.config().peer(peer.getId().toString()).map(Peer::clientAddress).ifPresent(m::setClientAddress);
      b.addMembers(m);
    }
    response.onNext(b.build());
    response.onCompleted();
  }

  private static Role role(DivisionInfo info) {
    return switch (info.getCurrentRole()) {
      case LEADER -> Role.LEADER;
      case FOLLOWER -> Role.FOLLOWER;
      case CANDIDATE -> Role.CANDIDATE;
      case LISTENER -> Role.LISTENER;
      default -> Role.ROLE_UNSPECIFIED;
    };
  }
}
