package io.leasehold.client.internal;

import io.grpc.MethodDescriptor;
import io.leasehold.client.AuditRecord;
import io.leasehold.client.AuthRole;
import io.leasehold.client.CallerIdentity;
import io.leasehold.client.IdentityRoles;
import io.leasehold.client.Permission;
import io.leasehold.proto.v1.AddRoleRequest;
import io.leasehold.proto.v1.AuditRequest;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.ListGrantsRequest;
import io.leasehold.proto.v1.ListRolesRequest;
import io.leasehold.proto.v1.RemoveRoleRequest;
import io.leasehold.proto.v1.RevokeRoleRequest;
import io.leasehold.proto.v1.WhoAmIRequest;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/** The wire side of {@code LeaseholdAuth}. */
public final class AuthCalls {
  private final ClientCore core;

  public AuthCalls(ClientCore core) {
    this.core = core;
  }

  public CompletableFuture<CallerIdentity> whoAmI() {
    return call(
            Calls.Target.READ,
            AuthGrpc.getWhoAmIMethod(),
            WhoAmIRequest.getDefaultInstance(),
            "WhoAmI")
        .thenApply(
            r ->
                new CallerIdentity(
                    r.getIdentity(),
                    r.getAuthenticatedBy(),
                    r.getAuthenticationEnabled(),
                    r.getRolesList().stream().map(Protos::authRole).toList()));
  }

  public CompletableFuture<AuthRole> addRole(
      String name, Permission permission, List<String> prefixes) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(permission, "permission");
    Objects.requireNonNull(prefixes, "prefixes");
    AddRoleRequest request =
        AddRoleRequest.newBuilder().setRole(Protos.authRole(name, permission, prefixes)).build();
    return call(Calls.Target.WRITE, AuthGrpc.getAddRoleMethod(), request, "AddRole " + name)
        .thenApply(r -> Protos.authRole(r.getRole()));
  }

  public CompletableFuture<Boolean> removeRole(String name) {
    Objects.requireNonNull(name, "name");
    return call(
            Calls.Target.WRITE,
            AuthGrpc.getRemoveRoleMethod(),
            RemoveRoleRequest.newBuilder().setName(name).build(),
            "RemoveRole " + name)
        .thenApply(r -> r.getExisted());
  }

  public CompletableFuture<List<AuthRole>> roles() {
    return call(
            Calls.Target.READ,
            AuthGrpc.getListRolesMethod(),
            ListRolesRequest.getDefaultInstance(),
            "ListRoles")
        .thenApply(r -> r.getRolesList().stream().map(Protos::authRole).toList());
  }

  public CompletableFuture<Boolean> grant(String identity, String role) {
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(role, "role");
    return call(
            Calls.Target.WRITE,
            AuthGrpc.getGrantRoleMethod(),
            GrantRoleRequest.newBuilder().setIdentity(identity).setRole(role).build(),
            "GrantRole " + identity + " " + role)
        .thenApply(r -> r.getAlreadyGranted());
  }

  public CompletableFuture<Boolean> revoke(String identity, String role) {
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(role, "role");
    return call(
            Calls.Target.WRITE,
            AuthGrpc.getRevokeRoleMethod(),
            RevokeRoleRequest.newBuilder().setIdentity(identity).setRole(role).build(),
            "RevokeRole " + identity + " " + role)
        .thenApply(r -> r.getWasGranted());
  }

  public CompletableFuture<List<IdentityRoles>> grants() {
    return grants("");
  }

  public CompletableFuture<List<IdentityRoles>> grants(String identity) {
    Objects.requireNonNull(identity, "identity");
    return call(
            Calls.Target.READ,
            AuthGrpc.getListGrantsMethod(),
            ListGrantsRequest.newBuilder().setIdentity(identity).build(),
            "ListGrants")
        .thenApply(
            r ->
                r.getGrantsList().stream()
                    .map(g -> new IdentityRoles(g.getIdentity(), g.getRolesList()))
                    .toList());
  }

  public CompletableFuture<List<AuditRecord>> audit(int limit, String identity) {
    Objects.requireNonNull(identity, "identity");
    if (limit < 0) {
      throw new IllegalArgumentException("limit: must not be negative, got " + limit);
    }
    return call(
            Calls.Target.READ,
            AuthGrpc.getAuditMethod(),
            AuditRequest.newBuilder().setLimit(limit).setIdentity(identity).build(),
            "Audit")
        .thenApply(r -> r.getEntriesList().stream().map(Protos::audit).toList());
  }

  private <Q, R> CompletableFuture<R> call(
      Calls.Target target, MethodDescriptor<Q, R> method, Q request, String what) {
    core.ensureOpen(what);
    return core.onCallbacks(core.calls().call(target, method, request, what));
  }
}
