package io.leasehold.server.ui;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.ListRoutesRequest;
import io.leasehold.proto.v1.ListRoutesResponse;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import io.leasehold.server.api.AdminService;
import io.leasehold.server.api.ClusterService;
import io.leasehold.server.api.LeasesService;
import io.leasehold.server.api.RoutingService;
import io.leasehold.server.raft.Consensus;
import io.leasehold.server.raft.PeerProbe;
import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.core.Limits;
import io.leasehold.statemachine.core.RegistryNames;
import io.leasehold.statemachine.core.Validation;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The JSON the dashboard reads, one method per endpoint. Every read goes through the gRPC API's own
 * handler (the same validation and the same linearizable read), so the dashboard shows what a
 * client would see; only the members' replication progress comes from this node's consensus ({@link
 * Consensus#liveness}) and the other members' own answers ({@link PeerProbe}).
 */
final class DashboardApi {
  static final int DEFAULT_PAGE = 100;
  static final int MAX_PAGE = 1000;
  static final int HISTORY_LIMIT = 50;
  static final int PARTITIONS = 256;
  static final int MAX_SERVICE_INSTANCES = 1000;

  /**
   * How long the Cluster page waits for the other members' answers (a little above the probe's own
   * deadline).
   */
  static final Duration PROBE_WAIT = Duration.ofMillis(1500);

  private static final JsonFormat.Printer PRINTER =
      JsonFormat.printer().omittingInsignificantWhitespace();

  private final String nodeId;
  private final Supplier<Consensus.Liveness> liveness;
  private final Duration electionTimeoutMax;
  private final Duration timeout;
  private final LeasesService leases;
  private final RoutingService routing;
  private final AdminService admin;
  private final ClusterService cluster;
  private final PeerProbe peers;

  DashboardApi(
      String nodeId,
      Supplier<Consensus.Liveness> liveness,
      Duration electionTimeoutMax,
      Duration timeout,
      LeasesService leases,
      RoutingService routing,
      AdminService admin,
      ClusterService cluster,
      PeerProbe peers) {
    this.nodeId = nodeId;
    this.liveness = liveness;
    this.electionTimeoutMax = electionTimeoutMax;
    this.timeout = timeout;
    this.leases = leases;
    this.routing = routing;
    this.admin = admin;
    this.cluster = cluster;
    this.peers = peers;
  }

  /** Who may read what: the gRPC method and request each endpoint stands for. */
  record Access(io.grpc.MethodDescriptor<?, ?> method, Object request) {}

  static Access clusterAccess() {
    return new Access(ClusterGrpc.getStatusMethod(), StatusRequest.getDefaultInstance());
  }

  // ---- cluster ----

  /**
   * Every member as it reports itself: this node from its own Status, each other member from its
   * answer to a group-info probe over the peer port (asked in parallel, one deadline for all). On
   * the leader each follower also gets its match index and time since it last answered, from the
   * leader's own replication state. {@code lag} is how far a member's applied index trails the
   * leader's commit index.
   */
  JsonObject cluster() throws UiException {
    StatusResponse status =
        UnaryCall.call(cluster::status, StatusRequest.getDefaultInstance(), timeout);
    Map<String, CompletableFuture<Consensus.MemberReport>> answers = new TreeMap<>();
    for (Member m : status.getMembersList()) {
      if (!m.getId().equals(nodeId)) {
        answers.put(m.getId(), peers.report(m.getId()));
      }
    }
    Map<String, Consensus.Follower> followers = new TreeMap<>();
    for (Consensus.Follower f : liveness.get().followers().orElse(List.of())) {
      followers.put(f.id(), f);
    }
    Map<String, Consensus.MemberReport> replies = await(answers);
    long leaderCommit = leaderCommitIndex(status, replies);

    JsonObject o = json(status);
    o.addProperty("node", nodeId);
    o.addProperty("role", status.getRole().name());
    JsonArray members = new JsonArray();
    for (Member m : status.getMembersList()) {
      JsonObject j = json(m);
      boolean self = m.getId().equals(nodeId);
      j.addProperty("leader", m.getId().equals(status.getLeaderId()));
      j.addProperty("self", self);
      long applied;
      if (self) {
        j.addProperty("role", status.getRole().name());
        j.addProperty("term", status.getTerm());
        j.addProperty("commitIndex", status.getCommitIndex());
        applied = status.getAppliedIndex();
        j.addProperty("leaderId", status.getLeaderId());
        j.addProperty("health", status.getLeaderId().isEmpty() ? "NO_LEADER" : "OK");
      } else if (replies.containsKey(m.getId())) {
        Consensus.MemberReport r = replies.get(m.getId());
        j.addProperty("role", r.role());
        j.addProperty("term", r.term());
        j.addProperty("commitIndex", r.commitIndex());
        applied = r.appliedIndex();
        j.addProperty("leaderId", r.leaderId());
        j.addProperty(
            "health",
            !r.storageHealthy() ? "STORAGE_FAILED" : r.leaderId().isEmpty() ? "NO_LEADER" : "OK");
      } else {
        applied = -1;
        j.addProperty(
            "health", "UNREACHABLE"); // it gave this node no answer within the probe's deadline
        j.addProperty("error", errorOf(answers.get(m.getId())));
      }
      if (applied >= 0) {
        j.addProperty("appliedIndex", applied);
        j.addProperty("lag", Math.max(0, leaderCommit - applied));
      }
      Consensus.Follower f = followers.get(m.getId());
      if (f != null) {
        if (f.matchIndex() >= 0) { // -1 until the follower first answers this leader
          j.addProperty("matchIndex", f.matchIndex());
        }
        j.addProperty("lastContactMillis", f.lastContactMillis());
        if (f.lastContactMillis() > electionTimeoutMax.toMillis()) {
          // From the leader, which is what counts for commits.
          j.addProperty("health", "UNREACHABLE");
          j.addProperty(
              "error", "no answer to the leader's appends for " + f.lastContactMillis() + " ms");
        }
      }
      members.add(j);
    }
    o.add("members", members);
    return o;
  }

  /**
   * The answers that came within the probe's deadline (all asked at once, so one deadline for all).
   */
  private static Map<String, Consensus.MemberReport> await(
      Map<String, CompletableFuture<Consensus.MemberReport>> answers) {
    try {
      CompletableFuture.allOf(answers.values().toArray(CompletableFuture[]::new))
          .get(PROBE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // Some member did not answer: the others' answers are used below.
    }
    Map<String, Consensus.MemberReport> replies = new TreeMap<>();
    answers.forEach(
        (id, f) -> {
          if (f.isDone() && !f.isCompletedExceptionally()) {
            replies.put(id, f.join());
          }
        });
    return replies;
  }

  /**
   * The leader's commit index: this node's if it leads, else the leader's answer, else the highest
   * any member gave.
   */
  private static long leaderCommitIndex(
      StatusResponse status, Map<String, Consensus.MemberReport> replies) {
    if (status.getRole() == io.leasehold.proto.v1.Role.LEADER) {
      return status.getCommitIndex();
    }
    Consensus.MemberReport leader = replies.get(status.getLeaderId());
    if (leader != null) {
      return leader.commitIndex();
    }
    long max = status.getCommitIndex();
    for (Consensus.MemberReport r : replies.values()) {
      max = Math.max(max, r.commitIndex());
    }
    return max;
  }

  private static String errorOf(CompletableFuture<Consensus.MemberReport> answer) {
    if (answer == null || !answer.isDone()) {
      return "no answer within " + PROBE_WAIT.toMillis() + " ms";
    }
    try {
      answer.join();
      return "";
    } catch (CompletionException | java.util.concurrent.CancellationException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      return cause instanceof TimeoutException
          ? "no answer within " + PROBE_WAIT.toMillis() + " ms"
          : String.valueOf(
              cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage());
    }
  }

  // ---- leases ----

  ListRequest leasesRequest(Params p) throws UiException {
    return ListRequest.newBuilder()
        .setPrefix(p.text("prefix"))
        .setHolder(p.text("holder"))
        .setStartAfter(p.text("pageToken"))
        .setLimit(p.integer("limit", DEFAULT_PAGE, 1, MAX_PAGE))
        .setStale(p.flag("stale"))
        .build();
  }

  /**
   * One page of leases by prefix (and holder); {@code nextPageToken} is absent on the last page.
   */
  JsonObject leases(ListRequest request) throws UiException {
    ListResponse r = UnaryCall.call(leases::list, request, timeout);
    JsonObject o = new JsonObject();
    JsonArray items = new JsonArray();
    for (Lease l : r.getLeasesList()) {
      items.add(json(l));
    }
    o.add("leases", items);
    o.addProperty("revision", r.getRevision());
    if (r.getMore() && r.getLeasesCount() > 0) {
      o.addProperty("nextPageToken", r.getLeases(r.getLeasesCount() - 1).getName());
    }
    return o;
  }

  GetRequest leaseRequest(Params p) throws UiException {
    return GetRequest.newBuilder().setName(p.required("name")).setStale(p.flag("stale")).build();
  }

  HistoryRequest historyRequest(GetRequest get) {
    return HistoryRequest.newBuilder()
        .setName(get.getName())
        .setLimit(HISTORY_LIMIT)
        .setStale(get.getStale())
        .build();
  }

  /**
   * A lease and how each earlier lease of its name ended. History is an admin read in the API; a
   * caller without it sees the lease and {@code historyError} saying why.
   */
  JsonObject lease(GetRequest get, Optional<UiException> historyDenied) throws UiException {
    GetResponse r = UnaryCall.call(leases::get, get, timeout);
    JsonObject o = new JsonObject();
    o.addProperty("name", get.getName());
    o.addProperty("found", r.getFound());
    if (r.getFound()) {
      o.add("lease", json(r.getLease()));
    }
    o.addProperty("revision", r.getRevision());
    if (historyDenied.isPresent()) {
      o.addProperty("historyError", historyDenied.get().getMessage());
    } else {
      JsonObject h = json(UnaryCall.call(admin::history, historyRequest(get), timeout));
      o.add("history", h.has("leases") ? h.get("leases") : new JsonArray());
    }
    return o;
  }

  // ---- routes, services, partitions ----

  ListRoutesRequest routesRequest(Params p) throws UiException {
    return ListRoutesRequest.newBuilder()
        .setPrefix(p.text("prefix"))
        .setStartAfter(p.text("pageToken"))
        .setLimit(p.integer("limit", DEFAULT_PAGE, 1, MAX_PAGE))
        .setStale(p.flag("stale"))
        .build();
  }

  JsonObject routes(ListRoutesRequest request) throws UiException {
    ListRoutesResponse r = UnaryCall.call(routing::listRoutes, request, timeout);
    JsonObject o = json(r);
    if (!o.has("routes")) {
      o.add("routes", new JsonArray());
    }
    o.remove("more");
    if (r.getMore() && r.getRoutesCount() > 0) {
      o.addProperty("nextPageToken", r.getRoutes(r.getRoutesCount() - 1).getName());
    }
    return o;
  }

  ListRequest servicesRequest(Params p) throws UiException {
    String service = p.text("service");
    if (service.contains("/")) {
      throw UiException.badParameter("service", "a service name has no '/'");
    }
    return ListRequest.newBuilder()
        .setPrefix(
            service.isEmpty() ? RegistryNames.NAMESPACE : RegistryNames.servicePrefix(service))
        .setLimit(MAX_SERVICE_INSTANCES)
        .setStale(p.flag("stale"))
        .build();
  }

  /**
   * The zones a services page asks for ({@code zone=a,b}: instances in any of them; none: every
   * zone), by the rules of a Resolve's zones.
   */
  static Set<String> zones(Params p) throws UiException {
    String zone = p.text("zone");
    if (zone.isEmpty()) {
      return Set.of();
    }
    List<String> zones = List.of(zone.split(",", -1));
    try {
      Validation.choices("zone", zones, Limits.MAX_METADATA_VALUE_BYTES);
    } catch (InvalidArgumentException e) {
      throw UiException.badParameter(e.field(), e.getMessage().substring(e.field().length() + 2));
    }
    return new LinkedHashSet<>(zones);
  }

  /**
   * The registry's instances (names {@code service/<service>/<instance>}), by service and status;
   * with {@code zones}, only those whose zone (metadata {@code zone}) is one of them. {@code zones}
   * in the answer lists every zone of the instances listed, for the page's choice.
   */
  JsonObject services(ListRequest request, Set<String> zones) throws UiException {
    ListResponse r = UnaryCall.call(leases::list, request, timeout);
    Map<String, JsonArray> byService = new TreeMap<>();
    Set<String> seenZones = new TreeSet<>();
    for (Lease l : r.getLeasesList()) {
      String rest = l.getName().substring(RegistryNames.NAMESPACE.length());
      int slash = rest.indexOf('/');
      if (slash < 0) {
        continue;
      }
      String zone = l.getAttributes().getMetadataOrDefault(RegistryNames.ZONE_KEY, "");
      if (!zone.isEmpty()) {
        seenZones.add(zone);
      }
      if (!zones.isEmpty() && !zones.contains(zone)) {
        continue;
      }
      JsonObject i = new JsonObject();
      i.addProperty("zone", zone);
      i.addProperty("instance", rest.substring(slash + 1));
      i.addProperty("holder", l.getHolder());
      i.addProperty("token", l.getToken());
      i.addProperty("address", l.getAttributes().getAddress());
      i.addProperty(
          "status",
          l.getAttributes().getStatus().isEmpty() ? "SERVING" : l.getAttributes().getStatus());
      i.addProperty("state", l.getState().name());
      byService.computeIfAbsent(rest.substring(0, slash), k -> new JsonArray()).add(i);
    }
    JsonArray services = new JsonArray();
    byService.forEach(
        (name, instances) -> {
          JsonObject s = new JsonObject();
          s.addProperty("service", name);
          s.add("instances", instances);
          services.add(s);
        });
    JsonObject o = new JsonObject();
    o.add("services", services);
    JsonArray zoneList = new JsonArray();
    seenZones.forEach(zoneList::add);
    o.add("zones", zoneList);
    o.addProperty("truncated", r.getMore());
    o.addProperty("revision", r.getRevision());
    return o;
  }

  ListRequest partitionsRequest(Params p) throws UiException {
    String group = p.required("group");
    if (group.endsWith("/") || !group.contains("/")) {
      throw UiException.badParameter(
          "group",
          "must be <namespace>/<group> (the partition recipe's names are <namespace>/<group>/p/<k>)");
    }
    return ListRequest.newBuilder()
        .setPrefix(group + "/p/")
        .setLimit(MAX_PAGE)
        .setStale(p.flag("stale"))
        .build();
  }

  /** Partitions 0–255 of a PartitionView group and who owns each (absent: unowned). */
  JsonObject partitions(ListRequest request) throws UiException {
    ListResponse r = UnaryCall.call(leases::list, request, timeout);
    JsonArray owners = new JsonArray();
    String[] holder = new String[PARTITIONS];
    long[] token = new long[PARTITIONS];
    for (Lease l : r.getLeasesList()) {
      try {
        int k = Integer.parseInt(l.getName().substring(request.getPrefix().length()));
        if (k >= 0 && k < PARTITIONS) {
          holder[k] = l.getHolder();
          token[k] = l.getToken();
        }
      } catch (NumberFormatException e) {
        // Not a partition lease: skip it.
      }
    }
    for (int k = 0; k < PARTITIONS; k++) {
      JsonObject p = new JsonObject();
      p.addProperty("partition", k);
      if (holder[k] != null) {
        p.addProperty("holder", holder[k]);
        p.addProperty("token", token[k]);
      }
      owners.add(p);
    }
    JsonObject o = new JsonObject();
    o.addProperty("group", request.getPrefix().substring(0, request.getPrefix().length() - 3));
    o.add("partitions", owners);
    o.addProperty("revision", r.getRevision());
    return o;
  }

  static JsonObject json(MessageOrBuilder message) {
    try {
      JsonElement e = JsonParser.parseString(PRINTER.print(message));
      return e.getAsJsonObject();
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException(e);
    }
  }
}
