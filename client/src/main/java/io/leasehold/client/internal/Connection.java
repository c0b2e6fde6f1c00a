package io.leasehold.client.internal;

import io.grpc.CallOptions;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.GroupMember;
import io.leasehold.proto.v1.GroupRoute;
import io.leasehold.proto.v1.GroupStatus;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's endpoints and which one to use. Reads and watches stick to a "home" endpoint
 * (spreading clients over nodes) and move to the next one when it fails. Writes go to the leader
 * when it is known and {@code preferLeader} is on — any node accepts writes and forwards them, so
 * this only saves a hop — and otherwise to the home endpoint.
 *
 * <p>The leader and the members are learned from {@code Cluster.Status}, asked at start and after
 * every failure, and from the leader hint a node puts on an UNAVAILABLE reply.
 *
 * <p>On a cluster with lease groups the same answer says which group each placed namespace lives in
 * and who leads it: a write that acts in one namespace goes to its group's leader ({@link
 * #forWrites(String)}), where it is proposed without a hop. The table is asked again when a write
 * names a namespace it does not hold (placed since), when a group's leader fails, and when it is
 * older than {@link #ROUTES_MAX_AGE_NANOS}; until then a write may reach a node that no longer
 * leads its group, which forwards it as any node does. Where lease groups sit on subsets of the
 * nodes, the answer also says which nodes host each group, and a watch of one namespace opens on
 * one of them ({@link #forWatch}).
 */
public final class Connection implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Connection.class);
  private static final long PROBE_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  /** How long a table of group leaders is used before it is asked for again. */
  static final long ROUTES_MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(10);

  private static final int MAX_MISSED = 1024;

  /** How long a node a call failed on is passed over when a watch picks among a group's members. */
  static final long TROUBLE_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final ClientSettings settings;
  private final ConnectionDiagnosis diagnosis;
  private final ScheduledExecutorService scheduler;
  private final Executor channelExecutor;
  private final CopyOnWriteArrayList<Endpoint> endpoints = new CopyOnWriteArrayList<>();
  private final AtomicInteger home = new AtomicInteger();
  private final AtomicBoolean probing = new AtomicBoolean();
  private volatile Endpoint leader;
  private volatile Routes routes = Routes.NONE;

  /** When a write last asked for the table because it lacked the namespace, by namespace. */
  private final Map<String, Long> missed = new ConcurrentHashMap<>();

  /** When a call last failed on each endpoint for the node's sake (stopped, unreachable). */
  private final Map<Endpoint, Long> troubledAt = new ConcurrentHashMap<>();

  private volatile long lastProbeNanos = System.nanoTime() - PROBE_GAP_NANOS;
  private volatile boolean closed;

  /**
   * @param channelExecutor where the channels run calls' callbacks (shared by every client, rather
   *     than a pool of gRPC's own per channel)
   */
  public Connection(
      ClientSettings settings, ScheduledExecutorService scheduler, Executor channelExecutor) {
    this.settings = settings;
    this.diagnosis = new ConnectionDiagnosis(settings);
    this.scheduler = scheduler;
    this.channelExecutor = channelExecutor;
    for (String address : settings.endpoints()) {
      endpoint(address, true);
    }
  }

  /** Where reads and watches go. */
  public Endpoint forReads() {
    return endpoints.get(Math.floorMod(home.get(), endpoints.size()));
  }

  /**
   * Where a watch of {@code namespace} goes: where lease groups sit on subsets of the nodes, a node
   * that hosts the namespace's group (this client's home node if it is one), since the others end
   * such a watch; otherwise (null, no subsets, placed nowhere yet) as {@link #forReads()}.
   */
  public Endpoint forWatch(String namespace) {
    Endpoint home = forReads();
    List<Endpoint> hosts = namespace == null ? null : routes.hostsByNamespace.get(namespace);
    if (hosts == null || hosts.isEmpty() || hosts.contains(home)) {
      return home;
    }
    return pick(hosts);
  }

  /** One of {@code hosts}, by this client's home, skipping those that failed lately if it can. */
  private Endpoint pick(List<Endpoint> hosts) {
    List<Endpoint> well = hosts.stream().filter(e -> !troubled(e)).toList();
    List<Endpoint> from = well.isEmpty() ? hosts : well;
    return from.get(Math.floorMod(this.home.get(), from.size()));
  }

  /** Whether a call to {@code e} failed for the node's sake in the last few seconds. */
  private boolean troubled(Endpoint e) {
    Long at = troubledAt.get(e);
    return at != null && System.nanoTime() - at < TROUBLE_NANOS;
  }

  /**
   * Where a watch across namespaces goes, as each endpoint and the groups it follows there. One
   * entry with no groups: one stream of every group, on this client's home node or, where lease
   * groups sit on subsets of the nodes, on a node that hosts every one. Where no node does, one
   * stream per node chosen, each of the groups it hosts, so that each lease group is followed on
   * one of its members (the home node's first, then nodes already chosen) and the meta group with
   * the first; the client merges them ({@link FanInWatchCall}).
   */
  public Map<Endpoint, List<Integer>> forWatchAcross() {
    Endpoint home = forReads();
    Map<Integer, List<Endpoint>> byGroup = routes.hostsByGroup;
    if (byGroup.isEmpty() || byGroup.values().stream().anyMatch(List::isEmpty)) {
      return Map.of(home, List.of());
    }
    List<Endpoint> candidates = new ArrayList<>();
    candidates.add(home);
    byGroup.values().forEach(candidates::addAll);
    for (Endpoint e : candidates) {
      if (!troubled(e) && byGroup.values().stream().allMatch(hosts -> hosts.contains(e))) {
        return Map.of(e, List.of());
      }
    }
    Map<Endpoint, List<Integer>> plan = new LinkedHashMap<>();
    for (Map.Entry<Integer, List<Endpoint>> g : new TreeMap<>(byGroup).entrySet()) {
      List<Endpoint> hosts = g.getValue();
      Endpoint chosen =
          hosts.contains(home) && !troubled(home)
              ? home
              : plan.keySet().stream()
                  .filter(hosts::contains)
                  .findFirst()
                  .orElseGet(() -> pick(hosts));
      plan.computeIfAbsent(chosen, e -> new ArrayList<>()).add(g.getKey());
    }
    plan.values().iterator().next().add(0, 0);
    return plan;
  }

  /** Where writes go. */
  public Endpoint forWrites() {
    Endpoint l = leader;
    return settings.preferLeader() && l != null ? l : forReads();
  }

  /**
   * Where a write that acts in {@code namespace} goes: the leader of the lease group it is placed
   * on, when known; otherwise (null, one group, placed nowhere yet) as {@link #forWrites()}.
   */
  public Endpoint forWrites(String namespace) {
    Routes r = routes;
    if (namespace == null || !r.leaseGroups || !settings.preferLeader()) {
      return forWrites();
    }
    if (System.nanoTime() - r.learnedNanos > ROUTES_MAX_AGE_NANOS) {
      probe(); // leaders may have moved: this write goes as known, the next ones learn
    }
    Endpoint e = r.byNamespace.get(namespace);
    return e != null ? e : forWrites();
  }

  /**
   * A write that acts in {@code namespace} was answered: if the table lacks the namespace (its
   * first write placed it), ask for a new one, so that the next writes go to its group's leader.
   * Asked after the answer, not before the write, so that the placement is there to be learned.
   */
  public void wrote(String namespace) {
    Routes r = routes;
    if (namespace != null
        && r.leaseGroups
        && !r.byNamespace.containsKey(namespace)
        && firstMiss(namespace, System.nanoTime())) {
      probe();
    }
  }

  /**
   * A node answered with the version of its placement table ({@link Errors#PLACEMENT_VERSION}): if
   * it is newer than the table's, a namespace was placed or moved since, and the table is asked
   * again (at most every {@code PROBE_GAP_NANOS}, as every probe).
   */
  public void answeredWith(Metadata headers) {
    String v = headers == null ? null : headers.get(Errors.PLACEMENT_VERSION);
    if (v == null) {
      return;
    }
    long seen;
    try {
      seen = Long.parseLong(v);
    } catch (NumberFormatException ignored) {
      return;
    }
    if (seen > routes.version()) {
      probe();
    }
  }

  /**
   * Whether a write naming {@code namespace}, which the table lacks, should ask for a new one: once
   * per {@link #ROUTES_MAX_AGE_NANOS} a namespace, so that writes the meta group keeps (or that
   * never place their namespace, being refused) do not ask on every call.
   */
  private boolean firstMiss(String namespace, long now) {
    Long last = missed.get(namespace);
    if (last != null && now - last <= ROUTES_MAX_AGE_NANOS) {
      return false;
    }
    if (missed.size() >= MAX_MISSED) {
      missed.clear(); // a client writing to ever new namespaces: forget, rather than grow
    }
    missed.put(namespace, now);
    return true;
  }

  /**
   * The endpoint at {@code address} (a member's client address), added to the pool if it is new.
   */
  public Endpoint at(String address) {
    Endpoint e = endpoint(address, true);
    if (e == null) {
      throw new IllegalStateException("the client is closed");
    }
    return e;
  }

  /** Tells the failures no retry mends (see {@link ConnectionDiagnosis}). */
  public ConnectionDiagnosis diagnosis() {
    return diagnosis;
  }

  /**
   * The pool's endpoint at {@code address} if it has one; otherwise an endpoint outside the pool,
   * for a call to that one node (the caller shuts it down after), so that asking a node that is not
   * a member does not make it one of the nodes requests fail over to.
   */
  public Endpoint forOneCall(String address) {
    Endpoint e = endpoint(address, false);
    return e != null ? e : new Endpoint(address, settings, channelExecutor);
  }

  /** Whether {@code e} is one of the pool's endpoints. */
  public boolean pooled(Endpoint e) {
    return endpoints.contains(e);
  }

  public List<String> addresses() {
    return endpoints.stream().map(Endpoint::address).toList();
  }

  /**
   * A call to {@code e} failed: take its hint, move away from it if the node is the problem, look
   * for the leader again.
   */
  public void failed(Endpoint e, Status status, Metadata trailers) {
    String hint = trailers == null ? null : trailers.get(Errors.LEADER_HINT);
    boolean nodeTrouble = Errors.nodeTrouble(status.getCode());
    if (nodeTrouble) {
      troubledAt.put(e, System.nanoTime());
      if (leader == e) {
        leader = null;
      }
      Routes r = routes;
      if (r.byNamespace.containsValue(e)) {
        routes = r.without(e);
      }
      int h = home.get();
      if (endpoints.get(Math.floorMod(h, endpoints.size())) == e && home.compareAndSet(h, h + 1)) {
        LOG.debug(
            "endpoint {} failed ({}); reads and watches move to {}",
            e,
            status.getCode(),
            forReads());
      }
    }
    if (hint != null && !hint.isEmpty() && !hint.equals(e.address())) {
      Endpoint hinted = endpoint(hint, settings.discoverMembers());
      if (hinted != null) {
        leaderIs(hinted);
      }
    }
    if (nodeTrouble) {
      probe();
    }
  }

  /** Asks the home endpoint for the leader and the members, at most once per 200 ms. */
  public void probe() {
    if (closed || !probing.compareAndSet(false, true)) {
      return;
    }
    long wait = PROBE_GAP_NANOS - (System.nanoTime() - lastProbeNanos);
    if (wait > 0) {
      scheduler.schedule(this::sendProbe, wait, TimeUnit.NANOSECONDS);
    } else {
      sendProbe();
    }
  }

  private void sendProbe() {
    Endpoint target = forReads();
    lastProbeNanos = System.nanoTime();
    if (closed) {
      probing.set(false);
      return;
    }
    try {
      ClientCalls.asyncUnaryCall(
          target
              .channel()
              .newCall(
                  ClusterGrpc.getStatusMethod(),
                  CallOptions.DEFAULT.withDeadlineAfter(
                      settings.attemptTimeout().toNanos(), TimeUnit.NANOSECONDS)),
          StatusRequest.getDefaultInstance(),
          new StreamObserver<>() {
            @Override
            public void onNext(StatusResponse status) {
              learn(status);
            }

            @Override
            public void onError(Throwable t) {
              probing.set(false);
              Status s = Status.fromThrowable(t);
              if (Errors.nodeTrouble(s.getCode())) {
                int h = home.get();
                if (endpoints.get(Math.floorMod(h, endpoints.size())) == target) {
                  home.compareAndSet(h, h + 1);
                }
              }
            }

            @Override
            public void onCompleted() {
              probing.set(false);
            }
          });
    } catch (RuntimeException e) {
      probing.set(false);
      LOG.debug("cluster status probe failed to start", e);
    }
  }

  private void learn(StatusResponse status) {
    if (settings.discoverMembers()) {
      for (Member m : status.getMembersList()) {
        if (!m.getClientAddress().isEmpty()) {
          endpoint(m.getClientAddress(), true);
        }
      }
    }
    if (!status.getLeaderClientAddress().isEmpty()) {
      Endpoint l = endpoint(status.getLeaderClientAddress(), settings.discoverMembers());
      if (l != null && leaderIs(l)) {
        LOG.debug("leader is {} ({})", status.getLeaderId(), l);
      }
    }
    learnRoutes(status);
  }

  /**
   * Each namespace placed on a lease group, and that group's leader, as the answering node knows.
   */
  private void learnRoutes(StatusResponse status) {
    Map<String, String> addresses = new HashMap<>();
    for (Member m : status.getMembersList()) {
      addresses.put(m.getId(), m.getClientAddress());
    }
    Map<String, Endpoint> byNamespace = new HashMap<>();
    // Only where groups sit on subsets of the nodes (the answering node reaches some through their
    // members): which nodes host each namespace's group, for watches.
    boolean subsets = status.getReachedGroupsCount() > 0;
    Map<String, List<Endpoint>> hostsByNamespace = new HashMap<>();
    Map<Integer, List<Endpoint>> hostsByGroup = new HashMap<>();
    boolean leaseGroups = false;
    for (GroupStatus g : status.getGroupsList()) {
      leaseGroups |= g.getNumber() > 0;
      if (subsets && g.getNumber() > 0) {
        hosts(
            g.getMembersList().stream().map(GroupMember::getId).toList(),
            addresses,
            g.getNumber(),
            g.getNamespacesList(),
            hostsByNamespace,
            hostsByGroup);
      }
      String address = addresses.get(g.getLeaderId());
      if (g.getNumber() == 0 || address == null || address.isEmpty()) {
        continue; // the meta group's writes go to the leader; a group without one, anywhere
      }
      Endpoint e = endpoint(address, settings.discoverMembers());
      if (e != null) {
        g.getNamespacesList().forEach(ns -> byNamespace.put(ns, e));
      }
    }
    // Groups on subsets of the nodes: those the answering node serves through their members.
    for (GroupRoute g : status.getReachedGroupsList()) {
      leaseGroups = true;
      hosts(
          g.getMemberIdsList(),
          addresses,
          g.getNumber(),
          g.getNamespacesList(),
          hostsByNamespace,
          hostsByGroup);
      String address = addresses.get(g.getLeaderId());
      if (address == null || address.isEmpty()) {
        continue;
      }
      Endpoint e = endpoint(address, settings.discoverMembers());
      if (e != null) {
        g.getNamespacesList().forEach(ns -> byNamespace.putIfAbsent(ns, e));
      }
    }
    routes =
        new Routes(
            leaseGroups,
            Map.copyOf(byNamespace),
            Map.copyOf(hostsByNamespace),
            Map.copyOf(hostsByGroup),
            System.nanoTime(),
            status.getPlacementVersion());
  }

  /**
   * Puts the endpoints of {@code members} as the hosts of lease group {@code group} and of each of
   * its {@code namespaces}.
   */
  private void hosts(
      List<String> members,
      Map<String, String> addresses,
      int group,
      List<String> namespaces,
      Map<String, List<Endpoint>> into,
      Map<Integer, List<Endpoint>> byGroup) {
    List<Endpoint> endpoints = new ArrayList<>();
    for (String id : members) {
      String address = addresses.get(id);
      Endpoint e =
          address == null || address.isEmpty()
              ? null
              : endpoint(address, settings.discoverMembers());
      if (e != null) {
        endpoints.add(e);
      }
    }
    // A group whose members' addresses are unknown is kept, empty: a watch across namespaces
    // then goes to one node, which refuses it unless it hosts every group, rather than missing it.
    byGroup.put(group, List.copyOf(endpoints));
    if (!endpoints.isEmpty()) {
      namespaces.forEach(ns -> into.put(ns, List.copyOf(endpoints)));
    }
  }

  /**
   * Whether the cluster runs lease groups, and their leaders by namespace, when learned, from a
   * placement table of {@code version}.
   */
  private record Routes(
      boolean leaseGroups,
      Map<String, Endpoint> byNamespace,
      Map<String, List<Endpoint>> hostsByNamespace,
      Map<Integer, List<Endpoint>> hostsByGroup,
      long learnedNanos,
      long version) {
    static final Routes NONE =
        new Routes(false, Map.of(), Map.of(), Map.of(), System.nanoTime(), 0);

    /**
     * Without the namespaces whose leader is {@code failed}: theirs go to the leader until asked.
     */
    Routes without(Endpoint failed) {
      Map<String, Endpoint> kept = new HashMap<>(byNamespace);
      kept.values().removeIf(e -> e == failed);
      return new Routes(
          leaseGroups, Map.copyOf(kept), hostsByNamespace, hostsByGroup, learnedNanos, version);
    }
  }

  /**
   * Writes go to {@code l} from now; true if it is a new leader, whose channel then reconnects at
   * once.
   */
  private boolean leaderIs(Endpoint l) {
    if (l == leader) {
      return false;
    }
    l.reconnectNow();
    leader = l;
    return true;
  }

  /** The endpoint for an address, added if {@code add} (and the client is open). */
  private synchronized Endpoint endpoint(String address, boolean add) {
    for (Endpoint e : endpoints) {
      if (e.address().equals(address)) {
        return e;
      }
    }
    if (!add || closed) {
      return null;
    }
    Endpoint e = new Endpoint(address, settings, channelExecutor);
    endpoints.add(e);
    return e;
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    for (Endpoint e : endpoints) {
      e.shutdown();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    try {
      for (Endpoint e : endpoints) {
        e.awaitTermination(Math.max(0, deadline - System.nanoTime()));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
