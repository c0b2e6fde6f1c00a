package io.leasehold.server.api;

import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.AddRoleRequest;
import io.leasehold.proto.v1.AddRoleResponse;
import io.leasehold.proto.v1.AuditRequest;
import io.leasehold.proto.v1.AuditResponse;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.GrantRoleResponse;
import io.leasehold.proto.v1.ListGrantsRequest;
import io.leasehold.proto.v1.ListGrantsResponse;
import io.leasehold.proto.v1.ListRolesRequest;
import io.leasehold.proto.v1.ListRolesResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.proto.v1.RemoveRoleRequest;
import io.leasehold.proto.v1.RemoveRoleResponse;
import io.leasehold.proto.v1.RevokeRoleRequest;
import io.leasehold.proto.v1.RevokeRoleResponse;
import io.leasehold.proto.v1.WhoAmIRequest;
import io.leasehold.proto.v1.WhoAmIResponse;
import io.leasehold.server.auth.Caller;
import io.leasehold.server.auth.NodeAuth;
import io.leasehold.server.raft.Consensus;
import io.leasehold.statemachine.core.InvalidArgumentException;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The Auth API: roles and grants are replicated commands (validated by the core, which refuses a
 * change that would lock every admin out); reads are linearizable unless stale. Who may call what
 * is decided before any of this runs, by the authorization point.
 */
public final class AuthService extends AuthGrpc.AuthImplBase {
  private final ReplicatedCalls calls;
  private final Consensus consensus;
  private final NodeAuth auth;

  public AuthService(Consensus consensus, Supplier<Optional<String>> leaderHint, NodeAuth auth) {
    this.calls = new ReplicatedCalls(consensus, leaderHint);
    this.consensus = consensus;
    this.auth = auth;
  }

  @Override
  public void whoAmI(WhoAmIRequest request, StreamObserver<WhoAmIResponse> response) {
    Caller caller = Caller.current();
    WhoAmIResponse.Builder b =
        WhoAmIResponse.newBuilder()
            .setIdentity(caller.identity())
            .setAuthenticatedBy(caller.via())
            .setAuthenticationEnabled(auth.enabled());
    if (caller.authenticated()) {
      b.addAllRoles(auth.access().access(caller.identity(), auth.initialAdmin()).roles());
    }
    response.onNext(b.build());
    response.onCompleted();
  }

  @Override
  public void addRole(AddRoleRequest request, StreamObserver<AddRoleResponse> response) {
    calls.write(
        () -> {},
        () -> LogCommand.newBuilder().setAddRole(request).build(),
        LogReply::getAddRole,
        response);
  }

  @Override
  public void removeRole(RemoveRoleRequest request, StreamObserver<RemoveRoleResponse> response) {
    calls.write(
        () -> {},
        () -> LogCommand.newBuilder().setRemoveRole(request).build(),
        LogReply::getRemoveRole,
        response);
  }

  @Override
  public void grantRole(GrantRoleRequest request, StreamObserver<GrantRoleResponse> response) {
    calls.write(
        () -> {},
        () -> LogCommand.newBuilder().setGrantRole(request).build(),
        LogReply::getGrantRole,
        response);
  }

  @Override
  public void revokeRole(RevokeRoleRequest request, StreamObserver<RevokeRoleResponse> response) {
    calls.write(
        () -> {},
        () -> LogCommand.newBuilder().setRevokeRole(request).build(),
        LogReply::getRevokeRole,
        response);
  }

  @Override
  public void listRoles(ListRolesRequest request, StreamObserver<ListRolesResponse> response) {
    calls.read(
        () -> {},
        () -> ReadQuery.newBuilder().setListRoles(request).build(),
        request.getStale(),
        ReadReply::getListRoles,
        response);
  }

  @Override
  public void listGrants(ListGrantsRequest request, StreamObserver<ListGrantsResponse> response) {
    calls.read(
        () -> {},
        () -> ReadQuery.newBuilder().setListGrants(request).build(),
        request.getStale(),
        ReadReply::getListGrants,
        response);
  }

  @Override
  public void audit(AuditRequest request, StreamObserver<AuditResponse> response) {
    calls.read(
        () -> {
          if (request.getLimit() < 0) {
            throw new InvalidArgumentException(
                "limit", "must not be negative, got " + request.getLimit());
          }
        },
        () -> ReadQuery.newBuilder().setAudit(request).build(),
        request.getStale(),
        ReadReply::getAudit,
        response);
  }
}
