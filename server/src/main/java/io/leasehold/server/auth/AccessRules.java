package io.leasehold.server.auth;

import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.leasehold.proto.v1.AcceptTransferRequest;
import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.CreateSessionRequest;
import io.leasehold.proto.v1.DeletePolicyRequest;
import io.leasehold.proto.v1.DeregisterRequest;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListRoutesRequest;
import io.leasehold.proto.v1.LookupRequest;
import io.leasehold.proto.v1.Permission;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.ResolveRequest;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.RoutingGrpc;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.SetStatusRequest;
import io.leasehold.proto.v1.TransferRequest;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.statemachine.core.AccessView;
import io.leasehold.statemachine.core.RegistryNames;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * What every RPC of the Leasehold services needs of its caller: one rule per method, checked by the
 * authorization point on the request as the handler will see it. A method without a rule is refused
 * (and {@code AccessRulesCoverageTest} fails), so no RPC ships unguarded.
 *
 * <p>A read, list or watch of a prefix needs the permission over the whole prefix: it is refused,
 * never narrowed to the names the caller may see. A lookup by holder (history) spans names of any
 * prefix, so it needs its permission over every name.
 */
public final class AccessRules {
  /** What a rule asks for, computed from the request. */
  public sealed interface Scope {
    /** Every one of these lease names. */
    record Names(List<String> names) implements Scope {}

    /** Every name under this prefix (the empty prefix: every name). */
    record Prefix(String prefix) implements Scope {}

    /** The whole cluster: a role over every name. */
    record Everything() implements Scope {}

    /** Some names at least (this node's own status). */
    record Some() implements Scope {}

    /** Nothing but an identity. */
    record Authenticated() implements Scope {}
  }

  /**
   * @param permission what the caller needs over the scope
   * @param scope the scope, from the request
   * @param holder the holder the request names, which must be the caller, or null where none
   */
  public record Rule(
      Permission permission, Function<Object, Scope> scope, Function<Object, String> holder) {}

  private static final Map<String, Rule> RULES = rules();

  private AccessRules() {}

  public static Optional<Rule> of(String fullMethodName) {
    return Optional.ofNullable(RULES.get(fullMethodName));
  }

  /** The services every rule covers: all but health and reflection. */
  public static List<ServiceDescriptor> services() {
    return List.of(
        LeasesGrpc.getServiceDescriptor(),
        RoutingGrpc.getServiceDescriptor(),
        RegistryGrpc.getServiceDescriptor(),
        ClusterGrpc.getServiceDescriptor(),
        AdminGrpc.getServiceDescriptor(),
        AuthGrpc.getServiceDescriptor());
  }

  /** Why {@code access} may not make {@code request} through {@code rule}; empty if it may. */
  public static Optional<String> denial(Rule rule, Object request, AccessView.Access access) {
    if (rule.holder() != null) {
      String holder = rule.holder().apply(request);
      if (!holder.isEmpty() && !holder.equals(access.identity())) {
        return Optional.of(
            "holder: must be the caller's identity "
                + access.identity()
                + " (or empty), not "
                + holder);
      }
    }
    Permission p = rule.permission();
    String what = p.name().toLowerCase(Locale.ROOT);
    Scope scope = rule.scope().apply(request);
    if (scope instanceof Scope.Names n) {
      if (n.names().isEmpty()) {
        // A request that names nothing (a Renew without items) still needs the permission
        // somewhere:
        // checked over no name at all it would pass for anyone, and reach the handler.
        return access.onSome(p)
            ? Optional.empty()
            : Optional.of(access.identity() + " has no " + what + " role");
      }
      return n.names().stream()
          .filter(name -> !access.onName(p, name))
          .findFirst()
          .map(name -> access.identity() + " has no " + what + " role over " + name);
    }
    if (scope instanceof Scope.Prefix pre) {
      return access.onPrefix(p, pre.prefix())
          ? Optional.empty()
          : Optional.of(
              access.identity()
                  + " has no "
                  + what
                  + " role over every name under \""
                  + pre.prefix()
                  + "\""
                  + " (a read, list or watch needs its role over the whole prefix)");
    }
    if (scope instanceof Scope.Everything) {
      return access.onEverything(p)
          ? Optional.empty()
          : Optional.of(
              access.identity()
                  + " has no "
                  + what
                  + " role over every name (needed for this cluster-wide action)");
    }
    if (scope instanceof Scope.Some) {
      return access.onSome(p)
          ? Optional.empty()
          : Optional.of(access.identity() + " holds no role");
    }
    return Optional.empty(); // Authenticated: the identity suffices
  }

  private static Map<String, Rule> rules() {
    Map<String, Rule> r = new HashMap<>();
    Function<Object, Scope> everything = q -> new Scope.Everything();
    // Leases
    put(
        r,
        LeasesGrpc.getAcquireMethod(),
        Permission.CLIENT,
        q -> names(((AcquireRequest) q).getName()),
        q -> ((AcquireRequest) q).getHolder());
    put(
        r,
        LeasesGrpc.getAcquireManyMethod(),
        Permission.CLIENT,
        q ->
            new Scope.Names(
                ((AcquireManyRequest) q)
                    .getItemsList().stream().map(AcquireManyItem::getName).toList()),
        q -> ((AcquireManyRequest) q).getHolder());
    put(
        r,
        LeasesGrpc.getRenewMethod(),
        Permission.CLIENT,
        q ->
            new Scope.Names(
                ((RenewRequest) q).getItemsList().stream().map(RenewItem::getName).toList()),
        null);
    put(
        r,
        LeasesGrpc.getReleaseMethod(),
        Permission.CLIENT,
        q -> names(((ReleaseRequest) q).getName()),
        null);
    put(
        r,
        LeasesGrpc.getUpdateMethod(),
        Permission.CLIENT,
        q -> names(((UpdateRequest) q).getName()),
        null);
    put(
        r,
        LeasesGrpc.getGetMethod(),
        Permission.READER,
        q -> names(((GetRequest) q).getName()),
        null);
    put(
        r,
        LeasesGrpc.getListMethod(),
        Permission.READER,
        q -> new Scope.Prefix(((ListRequest) q).getPrefix()),
        null);
    put(
        r,
        LeasesGrpc.getWatchMethod(),
        Permission.READER,
        q -> new Scope.Prefix(((WatchRequest) q).getPrefix()),
        null);
    // Sessions: a client's own (the core refuses another holder's keep-alive, and a close by
    // anyone but its holder or an admin over every name); reading them spans every name
    Function<Object, Scope> some = q -> new Scope.Some();
    put(
        r,
        LeasesGrpc.getCreateSessionMethod(),
        Permission.CLIENT,
        some,
        q -> ((CreateSessionRequest) q).getHolder());
    put(r, LeasesGrpc.getKeepAliveMethod(), Permission.CLIENT, some, null);
    put(r, LeasesGrpc.getCloseSessionMethod(), Permission.CLIENT, some, null);
    put(r, LeasesGrpc.getGetSessionMethod(), Permission.READER, everything, null);
    put(r, LeasesGrpc.getListSessionsMethod(), Permission.READER, everything, null);
    // A transfer by the holder needs client over the name; by anyone else, admin over it (checked
    // where it applies)
    put(
        r,
        LeasesGrpc.getTransferMethod(),
        Permission.CLIENT,
        q -> names(((TransferRequest) q).getName()),
        null);
    put(
        r,
        LeasesGrpc.getAcceptTransferMethod(),
        Permission.CLIENT,
        q -> names(((AcceptTransferRequest) q).getName()),
        q -> ((AcceptTransferRequest) q).getHolder());
    // Routing
    put(
        r,
        RoutingGrpc.getLookupMethod(),
        Permission.READER,
        q -> names(((LookupRequest) q).getName()),
        null);
    put(
        r,
        RoutingGrpc.getListRoutesMethod(),
        Permission.READER,
        q -> new Scope.Prefix(((ListRoutesRequest) q).getPrefix()),
        null);
    // Registry: an instance is the lease service/<service>/<instance>
    put(
        r,
        RegistryGrpc.getRegisterMethod(),
        Permission.CLIENT,
        q ->
            names(
                RegistryNames.leaseName(
                    ((RegisterRequest) q).getService(), ((RegisterRequest) q).getInstance())),
        q -> ((RegisterRequest) q).getHolder());
    put(
        r,
        RegistryGrpc.getDeregisterMethod(),
        Permission.CLIENT,
        q ->
            names(
                RegistryNames.leaseName(
                    ((DeregisterRequest) q).getService(), ((DeregisterRequest) q).getInstance())),
        null);
    put(
        r,
        RegistryGrpc.getSetStatusMethod(),
        Permission.CLIENT,
        q ->
            names(
                RegistryNames.leaseName(
                    ((SetStatusRequest) q).getService(), ((SetStatusRequest) q).getInstance())),
        null);
    put(
        r,
        RegistryGrpc.getResolveMethod(),
        Permission.READER,
        q -> new Scope.Prefix(RegistryNames.servicePrefix(((ResolveRequest) q).getService())),
        null);
    // Cluster: its status for anyone with a role; everything else cluster-wide admin
    put(r, ClusterGrpc.getStatusMethod(), Permission.READER, q -> new Scope.Some(), null);
    put(r, ClusterGrpc.getAddMemberMethod(), Permission.ADMIN, everything, null);
    put(r, ClusterGrpc.getRemoveMemberMethod(), Permission.ADMIN, everything, null);
    put(r, ClusterGrpc.getTransferLeadershipMethod(), Permission.ADMIN, everything, null);
    put(r, ClusterGrpc.getTakeSnapshotMethod(), Permission.ADMIN, everything, null);
    put(r, ClusterGrpc.getBackupMethod(), Permission.ADMIN, everything, null);
    put(r, ClusterGrpc.getMoveNamespaceMethod(), Permission.ADMIN, everything, null);
    put(r, ClusterGrpc.getSetGroupMembersMethod(), Permission.ADMIN, everything, null);
    // Admin: a namespace's policy and a name's lease or history for an admin over it; the rest
    // cluster-wide
    put(
        r,
        AdminGrpc.getGetPolicyMethod(),
        Permission.ADMIN,
        q -> namespace(((GetPolicyRequest) q).getNamespace()),
        null);
    put(r, AdminGrpc.getListPoliciesMethod(), Permission.ADMIN, everything, null);
    put(
        r,
        AdminGrpc.getSetPolicyMethod(),
        Permission.ADMIN,
        q -> namespace(((SetPolicyRequest) q).getNamespace()),
        null);
    put(
        r,
        AdminGrpc.getDeletePolicyMethod(),
        Permission.ADMIN,
        q -> namespace(((DeletePolicyRequest) q).getNamespace()),
        null);
    put(r, AdminGrpc.getBanMethod(), Permission.ADMIN, everything, null);
    put(r, AdminGrpc.getUnbanMethod(), Permission.ADMIN, everything, null);
    put(r, AdminGrpc.getListBansMethod(), Permission.ADMIN, everything, null);
    put(
        r,
        AdminGrpc.getRevokeMethod(),
        Permission.ADMIN,
        q -> names(((RevokeRequest) q).getName()),
        null);
    put(
        r,
        AdminGrpc.getHistoryMethod(),
        Permission.ADMIN,
        q ->
            ((HistoryRequest) q).getHolder().isEmpty()
                ? names(((HistoryRequest) q).getName())
                : new Scope.Everything(),
        null);
    // Auth: who am I for anyone authenticated; the rest cluster-wide admin
    put(
        r,
        AuthGrpc.getWhoAmIMethod(),
        Permission.PERMISSION_UNSPECIFIED,
        q -> new Scope.Authenticated(),
        null);
    put(r, AuthGrpc.getAddRoleMethod(), Permission.ADMIN, everything, null);
    put(r, AuthGrpc.getRemoveRoleMethod(), Permission.ADMIN, everything, null);
    put(r, AuthGrpc.getListRolesMethod(), Permission.ADMIN, everything, null);
    put(r, AuthGrpc.getGrantRoleMethod(), Permission.ADMIN, everything, null);
    put(r, AuthGrpc.getRevokeRoleMethod(), Permission.ADMIN, everything, null);
    put(r, AuthGrpc.getListGrantsMethod(), Permission.ADMIN, everything, null);
    put(r, AuthGrpc.getAuditMethod(), Permission.ADMIN, everything, null);
    return Map.copyOf(r);
  }

  private static Scope names(String name) {
    return new Scope.Names(List.of(name));
  }

  /** A namespace's policy covers the names under "namespace/"; the default policy, every name. */
  private static Scope namespace(String namespace) {
    return namespace.isEmpty() ? new Scope.Everything() : new Scope.Prefix(namespace + "/");
  }

  private static void put(
      Map<String, Rule> rules,
      MethodDescriptor<?, ?> method,
      Permission p,
      Function<Object, Scope> scope,
      Function<Object, String> holder) {
    if (rules.put(method.getFullMethodName(), new Rule(p, scope, holder)) != null) {
      throw new IllegalStateException("two rules for " + method.getFullMethodName());
    }
  }
}
