package io.leasehold.server.api;

import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.BanResponse;
import io.leasehold.proto.v1.DeletePolicyRequest;
import io.leasehold.proto.v1.DeletePolicyResponse;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetPolicyResponse;
import io.leasehold.proto.v1.GroupCopy;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.HistoryResponse;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.ListBansResponse;
import io.leasehold.proto.v1.ListPoliciesRequest;
import io.leasehold.proto.v1.ListPoliciesResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.RevokeResponse;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.SetPolicyResponse;
import io.leasehold.proto.v1.UnbanRequest;
import io.leasehold.proto.v1.UnbanResponse;
import io.leasehold.server.raft.Consensus;
import io.leasehold.statemachine.core.AdminValidation;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The Admin API: policies, bans, revocation and the history of ended leases. Writes are replicated
 * commands like any lease command (validated here first, so bad input never reaches the log and
 * leaves the stored policy alone); reads are linearizable unless stale.
 */
public final class AdminService extends AdminGrpc.AdminImplBase {
  private final Consensus consensus;
  private final ReplicatedCalls calls;
  private final LongSupplier wallClockMicros;

  public AdminService(
      Consensus consensus, Supplier<Optional<String>> leaderHint, LongSupplier wallClockMicros) {
    this.consensus = consensus;
    this.calls = new ReplicatedCalls(consensus, leaderHint);
    this.wallClockMicros = wallClockMicros;
  }

  @Override
  public void getPolicy(GetPolicyRequest request, StreamObserver<GetPolicyResponse> response) {
    calls.read(
        () -> AdminValidation.getPolicy(request),
        () -> ReadQuery.newBuilder().setGetPolicy(request).build(),
        request.getStale(),
        reply -> withCopies(reply.getGetPolicy(), request.getNamespace()),
        response);
  }

  /**
   * With lease groups, a policy's answer says which copy of the global state each lease group it
   * governs holds on this node (the namespace's group; every one for the default policy), and the
   * meta group's version to compare them with: a policy set is answered once every group's leader
   * holds it, and a member's replica follows.
   */
  private GetPolicyResponse withCopies(GetPolicyResponse answer, String namespace) {
    List<Consensus.GroupStatus> groups = consensus.groups();
    if (groups.size() < 2) {
      return answer;
    }
    GetPolicyResponse.Builder b = answer.toBuilder();
    for (Consensus.GroupStatus g : groups) {
      if (g.number() == 0) {
        b.setGlobalVersion(g.globalVersion());
      } else if (namespace.isEmpty() || g.namespaces().contains(namespace)) {
        b.addCopies(
            GroupCopy.newBuilder().setGroup(g.number()).setGlobalVersion(g.globalVersion()));
      }
    }
    return b.build();
  }

  @Override
  public void listPolicies(
      ListPoliciesRequest request, StreamObserver<ListPoliciesResponse> response) {
    calls.read(
        () -> {},
        () -> ReadQuery.newBuilder().setListPolicies(request).build(),
        request.getStale(),
        ReadReply::getListPolicies,
        response);
  }

  @Override
  public void setPolicy(SetPolicyRequest request, StreamObserver<SetPolicyResponse> response) {
    calls.write(
        () -> AdminValidation.setPolicy(request),
        () -> LogCommand.newBuilder().setSetPolicy(request).build(),
        LogReply::getSetPolicy,
        response);
  }

  @Override
  public void deletePolicy(
      DeletePolicyRequest request, StreamObserver<DeletePolicyResponse> response) {
    calls.write(
        () -> AdminValidation.deletePolicy(request),
        () -> LogCommand.newBuilder().setDeletePolicy(request).build(),
        LogReply::getDeletePolicy,
        response);
  }

  @Override
  public void ban(BanRequest request, StreamObserver<BanResponse> response) {
    calls.write(
        () -> {
          AdminValidation.ban(request);
          // An end already past on this node's clock is refused here; the core checks again with
          // the leader's stamp.
          AdminValidation.banEnd(request, wallClockMicros.getAsLong());
        },
        () -> LogCommand.newBuilder().setBan(request).build(),
        LogReply::getBan,
        response);
  }

  @Override
  public void unban(UnbanRequest request, StreamObserver<UnbanResponse> response) {
    calls.write(
        () -> AdminValidation.unban(request),
        () -> LogCommand.newBuilder().setUnban(request).build(),
        LogReply::getUnban,
        response);
  }

  @Override
  public void listBans(ListBansRequest request, StreamObserver<ListBansResponse> response) {
    calls.read(
        () -> AdminValidation.listBans(request),
        () -> ReadQuery.newBuilder().setListBans(request).build(),
        request.getStale(),
        ReadReply::getListBans,
        response);
  }

  @Override
  public void revoke(RevokeRequest request, StreamObserver<RevokeResponse> response) {
    calls.write(
        () -> AdminValidation.revoke(request),
        () -> LogCommand.newBuilder().setRevoke(request).build(),
        LogReply::getRevoke,
        response);
  }

  @Override
  public void history(HistoryRequest request, StreamObserver<HistoryResponse> response) {
    calls.read(
        () -> AdminValidation.history(request),
        () -> ReadQuery.newBuilder().setHistory(request).build(),
        request.getStale(),
        ReadReply::getHistory,
        response);
  }
}
