package io.leasehold.client;

import io.leasehold.client.internal.Calls;
import io.leasehold.client.internal.ClientCore;
import io.leasehold.client.internal.Protos;
import io.leasehold.proto.v1.AddRoleRequest;
import io.leasehold.proto.v1.AuditEntry;
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

/**
 * Identities, roles and the audit history ({@link LeaseholdClient#auth()}). Roles and grants are
 * replicated; the cluster refuses a change that would leave no identity with an admin role over
 * every name. Everything but {@link #whoAmI()} needs such an admin role when authentication is on.
 */
public final class LeaseholdAuth {
  private final ClientCore core;

  LeaseholdAuth(ClientCore core) {
    this.core = core;
  }

  /** Who the cluster takes this client to be, and the roles it holds. */
  public CompletableFuture<CallerIdentity> whoAmI() {
    return call(Calls.Target.READ, AuthGrpc.getWhoAmIMethod(), WhoAmIRequest.getDefaultInstance(), "WhoAmI")
        .thenApply(r -> new CallerIdentity(r.getIdentity(), r.getAuthenticatedBy(), r.getAuthenticationEnabled(),
            r.getRolesList().stream().map(LeaseholdAuth::role).toList()));
  }

  /**
   * Creates role {@code name}, or replaces it: {@code permission} over the names starting with
   * one of {@code prefixes} (none: every name). Completes with the role as stored.
   */
  public CompletableFuture<AuthRole> addRole(String name, Permission permission, List<String> prefixes) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(permission, "permission");
    Objects.requireNonNull(prefixes, "prefixes");
    io.leasehold.proto.v1.AuthRole role = io.leasehold.proto.v1.AuthRole.newBuilder()
        .setName(name)
        .setPermission(io.leasehold.proto.v1.Permission.valueOf(permission.name()))
        .addAllPrefixes(prefixes)
        .build();
    return call(Calls.Target.WRITE, AuthGrpc.getAddRoleMethod(), AddRoleRequest.newBuilder().setRole(role).build(), "AddRole " + name)
        .thenApply(r -> role(r.getRole()));
  }

  /** Removes role {@code name}; completes with whether it existed. Refused while an identity holds it. */
  public CompletableFuture<Boolean> removeRole(String name) {
    Objects.requireNonNull(name, "name");
    return call(Calls.Target.WRITE, AuthGrpc.getRemoveRoleMethod(), RemoveRoleRequest.newBuilder().setName(name).build(),
        "RemoveRole " + name).thenApply(r -> r.getExisted());
  }

  /** Every role, the built-in ones included, by name. */
  public CompletableFuture<List<AuthRole>> roles() {
    return call(Calls.Target.READ, AuthGrpc.getListRolesMethod(), ListRolesRequest.getDefaultInstance(), "ListRoles")
        .thenApply(r -> r.getRolesList().stream().map(LeaseholdAuth::role).toList());
  }

  /** Grants {@code role} to {@code identity}; completes with whether it was granted before. */
  public CompletableFuture<Boolean> grant(String identity, String role) {
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(role, "role");
    return call(Calls.Target.WRITE, AuthGrpc.getGrantRoleMethod(),
        GrantRoleRequest.newBuilder().setIdentity(identity).setRole(role).build(), "GrantRole " + identity + " " + role)
        .thenApply(r -> r.getAlreadyGranted());
  }

  /**
   * Takes {@code role} from {@code identity}; completes with whether it held it. Refused when it
   * would leave no identity with an admin role over every name.
   */
  public CompletableFuture<Boolean> revoke(String identity, String role) {
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(role, "role");
    return call(Calls.Target.WRITE, AuthGrpc.getRevokeRoleMethod(),
        RevokeRoleRequest.newBuilder().setIdentity(identity).setRole(role).build(), "RevokeRole " + identity + " " + role)
        .thenApply(r -> r.getWasGranted());
  }

  /** Every identity that holds a role, with its roles, by identity. */
  public CompletableFuture<List<IdentityRoles>> grants() {
    return grants("");
  }

  /** The roles of {@code identity} (empty: of every identity). */
  public CompletableFuture<List<IdentityRoles>> grants(String identity) {
    Objects.requireNonNull(identity, "identity");
    return call(Calls.Target.READ, AuthGrpc.getListGrantsMethod(), ListGrantsRequest.newBuilder().setIdentity(identity).build(),
        "ListGrants").thenApply(r -> r.getGrantsList().stream().map(g -> new IdentityRoles(g.getIdentity(), g.getRolesList())).toList());
  }

  /**
   * The audit history, newest first: at most {@code limit} records (0: all that is kept), of
   * {@code identity}'s actions only unless it is empty.
   */
  public CompletableFuture<List<AuditRecord>> audit(int limit, String identity) {
    Objects.requireNonNull(identity, "identity");
    if (limit < 0) {
      throw new IllegalArgumentException("limit: must not be negative, got " + limit);
    }
    return call(Calls.Target.READ, AuthGrpc.getAuditMethod(), AuditRequest.newBuilder().setLimit(limit).setIdentity(identity).build(),
        "Audit").thenApply(r -> r.getEntriesList().stream().map(LeaseholdAuth::audit).toList());
  }

  private <Q, R> CompletableFuture<R> call(Calls.Target target, io.grpc.MethodDescriptor<Q, R> method, Q request, String what) {
    core.ensureOpen(what);
    return core.onCallbacks(core.calls().call(target, method, request, what));
  }

  private static AuthRole role(io.leasehold.proto.v1.AuthRole r) {
    Permission p = switch (r.getPermission()) {
      case READER -> Permission.READER;
      case CLIENT -> Permission.CLIENT;
      case ADMIN -> Permission.ADMIN;
      default -> throw new IllegalStateException("role " + r.getName() + " has no known permission (" + r.getPermissionValue() + ")");
    };
    return new AuthRole(r.getName(), p, r.getPrefixesList(), r.getBuiltIn(), r.getRevision());
  }

  private static AuditRecord audit(AuditEntry e) {
    return new AuditRecord(e.getRevision(), Protos.instant(e.getTime()), e.getIdentity(), e.getAction(), e.getTarget(),
        e.getOutcome(), e.getDetail());
  }
}
