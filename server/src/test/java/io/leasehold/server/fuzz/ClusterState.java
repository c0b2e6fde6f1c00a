package io.leasehold.server.fuzz;

import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import io.grpc.Channel;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.AuthRole;
import io.leasehold.proto.v1.Ban;
import io.leasehold.proto.v1.EndedLease;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.IdentityGrants;
import io.leasehold.proto.v1.Instance;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.ListBansResponse;
import io.leasehold.proto.v1.ListGrantsRequest;
import io.leasehold.proto.v1.ListPoliciesRequest;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.ListRolesRequest;
import io.leasehold.proto.v1.ListRoutesRequest;
import io.leasehold.proto.v1.ListRoutesResponse;
import io.leasehold.proto.v1.NamespacePolicy;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.ResolveRequest;
import io.leasehold.proto.v1.Route;
import io.leasehold.proto.v1.RoutingGrpc;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The replicated state a cluster shows through its API, without what two runs of the same requests
 * may differ in (tokens, revisions, leader-stamped times): leases by name, policies, bans, routes,
 * registry instances, the history of the names and holders given, and the roles (name, permission,
 * prefixes, built-in or not; not the revision that set them) and every identity's grants. Read
 * linearizably.
 *
 * <p>The audit history is left out. Besides leader-stamped times and revisions, it records what the
 * replay does not repeat: admin calls the authorization point refused (and only up to 10 a second
 * per node), admin writes the cluster refused, snapshots, backups and leadership transfers; and the
 * bootstrap grant of the initial admin may come before or after the variant's own grants. The audit
 * history is fuzzed (Auth/Audit) but not compared.
 */
record ClusterState(SortedMap<String, String> entries) {
  /** The names and holders whose history is compared. */
  record Scope(Set<String> names, Set<String> holders) {}

  static ClusterState read(Channel channel, Scope scope) {
    SortedMap<String, String> e = new TreeMap<>();
    Set<String> services = new TreeSet<>();
    for (Lease l : leases(channel)) {
      e.put("lease " + l.getName(), text(l));
      String[] parts = l.getName().split("/", -1);
      if (parts.length == 3 && parts[0].equals("service")) {
        services.add(parts[1]);
      }
    }
    for (NamespacePolicy p :
        admin(channel).listPolicies(ListPoliciesRequest.getDefaultInstance()).getPoliciesList()) {
      e.put("policy \"" + p.getNamespace() + "\"", text(p));
    }
    for (Ban b : bans(channel)) {
      e.put("ban " + b.getHolder(), text(b) + (b.hasUntil() ? " (timed)" : ""));
    }
    for (Route r : routes(channel)) {
      e.put("route " + r.getName(), text(r));
    }
    for (String service : services) {
      for (Instance i :
          registry(channel)
              .resolve(ResolveRequest.newBuilder().setService(service).setAnyStatus(true).build())
              .getInstancesList()) {
        e.put("instance " + service + "/" + i.getInstance(), text(i));
      }
    }
    for (AuthRole r :
        auth(channel).listRoles(ListRolesRequest.getDefaultInstance()).getRolesList()) {
      e.put("role " + r.getName(), text(r));
    }
    for (IdentityGrants g :
        auth(channel).listGrants(ListGrantsRequest.getDefaultInstance()).getGrantsList()) {
      e.put("grants of " + g.getIdentity(), text(g));
    }
    for (String name : scope.names()) {
      history(
          channel, e, "history of name " + name, HistoryRequest.newBuilder().setName(name).build());
    }
    for (String holder : scope.holders()) {
      history(
          channel,
          e,
          "history of holder " + holder,
          HistoryRequest.newBuilder().setHolder(holder).build());
    }
    return new ClusterState(e);
  }

  private static void history(
      Channel channel, SortedMap<String, String> e, String key, HistoryRequest request) {
    try {
      List<String> ended = new ArrayList<>();
      for (EndedLease l : admin(channel).history(request).getLeasesList()) {
        ended.add(text(l));
      }
      if (!ended.isEmpty()) {
        e.put(key, String.join(" | ", ended));
      }
    } catch (StatusRuntimeException refused) {
      // A name or holder the run used that the API refuses to look up: the same in both runs.
      e.put(key, "refused: " + refused.getStatus().getCode());
    }
  }

  private static List<Lease> leases(Channel channel) {
    List<Lease> all = new ArrayList<>();
    String after = "";
    while (true) {
      ListResponse page =
          leasesStub(channel)
              .list(ListRequest.newBuilder().setLimit(1000).setStartAfter(after).build());
      all.addAll(page.getLeasesList());
      if (!page.getMore() || page.getLeasesCount() == 0) {
        return all;
      }
      after = page.getLeases(page.getLeasesCount() - 1).getName();
    }
  }

  private static List<Ban> bans(Channel channel) {
    List<Ban> all = new ArrayList<>();
    String after = "";
    while (true) {
      ListBansResponse page =
          admin(channel)
              .listBans(ListBansRequest.newBuilder().setLimit(1000).setStartAfter(after).build());
      all.addAll(page.getBansList());
      if (!page.getMore() || page.getBansCount() == 0) {
        return all;
      }
      after = page.getBans(page.getBansCount() - 1).getHolder();
    }
  }

  private static List<Route> routes(Channel channel) {
    List<Route> all = new ArrayList<>();
    String after = "";
    while (true) {
      ListRoutesResponse page =
          RoutingGrpc.newBlockingStub(channel)
              .withDeadlineAfter(20, TimeUnit.SECONDS)
              .listRoutes(
                  ListRoutesRequest.newBuilder().setLimit(1000).setStartAfter(after).build());
      all.addAll(page.getRoutesList());
      if (!page.getMore() || page.getRoutesCount() == 0) {
        return all;
      }
      after = page.getRoutes(page.getRoutesCount() - 1).getName();
    }
  }

  private static LeasesGrpc.LeasesBlockingStub leasesStub(Channel channel) {
    return LeasesGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  private static AdminGrpc.AdminBlockingStub admin(Channel channel) {
    return AdminGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  private static AuthGrpc.AuthBlockingStub auth(Channel channel) {
    return AuthGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  private static RegistryGrpc.RegistryBlockingStub registry(Channel channel) {
    return RegistryGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  private static String text(Message m) {
    return TextFormat.shortDebugString(ProtoWalk.without(m, ProtoWalk::runDependent));
  }

  /** What differs, one line per key, at most {@code max} lines. */
  List<String> differences(ClusterState other, int max) {
    List<String> out = new ArrayList<>();
    Set<String> keys = new TreeSet<>(entries.keySet());
    keys.addAll(other.entries.keySet());
    for (String k : keys) {
      String a = entries.get(k);
      String b = other.entries.get(k);
      if (!Objects.equals(a, b)) {
        out.add(
            k + ":\n      fuzzed run: " + abbreviate(a) + "\n      replay:     " + abbreviate(b));
        if (out.size() == max) {
          break;
        }
      }
    }
    return out;
  }

  int size() {
    return entries.size();
  }

  long count(String kind) {
    return entries.keySet().stream().filter(k -> k.startsWith(kind + " ")).count();
  }

  private static String abbreviate(String s) {
    return s == null ? "(none)" : s.length() <= 400 ? s : s.substring(0, 397) + "...";
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    for (Map.Entry<String, String> e : entries.entrySet()) {
      b.append(e.getKey()).append(" = ").append(abbreviate(e.getValue())).append('\n');
    }
    return b.toString();
  }
}
