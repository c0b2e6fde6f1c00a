package io.leasehold.server.watch;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.LeaseCore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * Serves Watch on a node whose namespaces may live in lease groups (docs/design/multi-raft.md,
 * "Watches, lists and revisions"). Each group has a hub of its own, fed by that group's applied
 * entries and counting that group's revisions. A watch of one namespace (a prefix with a {@code /})
 * follows the group the namespace lives in, as a list of the same prefix reads it, so a list's
 * revision is where the watch resumes. A namespace with no placement yet is placed first, as its
 * first grant would place it.
 *
 * <p>A watch whose prefix spans namespaces, or that resumes from a token, follows every group at
 * once ({@link MergedWatch}): its messages carry their group and a resume token, since the groups'
 * revisions do not compare. Such a watch resumes from a token, never from a bare revision.
 */
public final class GroupWatches implements WatchService {
  /** Where namespaces live, as this node's placement says. */
  public interface Placements {
    /** Whether lease groups serve namespaces on this node; if not, the meta group serves all. */
    boolean active();

    /**
     * The group whose revisions a watch of {@code namespace} follows (0: the meta group), placing
     * the namespace first if it has no placement; fails with the status the watch ends with.
     */
    CompletableFuture<Integer> groupToFollow(String namespace);

    /** The lease groups this node hosts, by number. */
    List<Integer> hostedGroups();

    /**
     * Every lease group this node serves requests of, by number: those it hosts and, where lease
     * groups sit on subsets of the nodes, those it reaches through their members.
     */
    default List<Integer> reachedGroups() {
      return hostedGroups();
    }

    /**
     * The client addresses of each lease group's members, as this node last learned them, for the
     * groups it reaches through their members; empty where it hosts every group.
     */
    default Map<Integer, List<String>> memberAddresses() {
      return Map.of();
    }
  }

  private final WatchHub meta;
  private final IntFunction<Optional<LeaseCore>> groupCore;
  private final Placements placements;
  private final ConcurrentHashMap<Integer, WatchHub> hubs = new ConcurrentHashMap<>();

  /**
   * @param meta the node's hub, which serves the meta group
   * @param groupCore lease group {@code n}'s state on this node, if it hosts the group
   */
  public GroupWatches(
      WatchHub meta, IntFunction<Optional<LeaseCore>> groupCore, Placements placements) {
    this.meta = meta;
    this.groupCore = groupCore;
    this.placements = placements;
  }

  /** From lease group {@code group}'s apply thread: its entry's events, to its hub. */
  public void onApplied(ApplyResult result, int group) {
    hub(group).onApplied(result);
  }

  /** Group {@code group}'s hub (0: the meta group's), made on first use. */
  WatchHub hub(int group) {
    if (group == 0) {
      return meta;
    }
    return hubs.computeIfAbsent(
        group,
        g ->
            meta.forGroup(
                () ->
                    groupCore
                        .apply(g)
                        .orElseThrow(
                            () ->
                                new IllegalStateException(
                                    "lease group " + g + " is not hosted on this node"))));
  }

  /**
   * Lease group {@code group} is no longer hosted on this node (removed from its members): its
   * hub's streams end UNAVAILABLE, and a later replica of the group gets a new hub.
   */
  public void left(int group) {
    WatchHub h = hubs.remove(group);
    if (h != null) {
      meta.dropGroup(
          h,
          "this node is no longer a member of lease group "
              + group
              + "; watch again, on a member of the group");
    }
  }

  /** Every hub: the meta group's, then each hosted lease group's, in order. */
  public List<WatchHub> hubs() {
    List<WatchHub> all = new ArrayList<>();
    all.add(meta);
    for (int g : placements.hostedGroups()) {
      all.add(hub(g));
    }
    return all;
  }

  /** The namespace a watch of {@code prefix} stays within, if it names one. */
  static Optional<String> namespaceOf(String prefix) {
    int slash = prefix.indexOf('/');
    return slash > 0 ? Optional.of(prefix.substring(0, slash)) : Optional.empty();
  }

  @Override
  public void watch(WatchRequest request, ServerCallStreamObserver<WatchFrame> out) {
    Map<Integer, Long> token = Map.of();
    if (!request.getResumeToken().isEmpty()) {
      if (request.getStartRevision() != 0) {
        out.onError(invalid("set it or start_revision, not both"));
        return;
      }
      try {
        token = MergedWatch.parse(request.getResumeToken());
      } catch (com.google.protobuf.InvalidProtocolBufferException e) {
        out.onError(invalid("is not a token a Watch or a List of this cluster returned"));
        return;
      }
    }
    if (request.getGroupsCount() > 0
        && !(namespaceOf(request.getPrefix()).isEmpty() || !token.isEmpty())) {
      out.onError(
          Status.INVALID_ARGUMENT
              .withDescription(
                  "groups: only for a watch across namespaces (a prefix without a \"/\", or one"
                      + " resumed from a resume_token); a watch of namespace "
                      + namespaceOf(request.getPrefix()).get()
                      + " follows its own group")
              .asRuntimeException());
      return;
    }
    if (!placements.active()) {
      if (request.getGroupsList().stream().anyMatch(g -> g != 0)) {
        out.onError(
            Status.INVALID_ARGUMENT
                .withDescription(
                    "groups: this cluster has no lease groups; the meta group (0) is its only one")
                .asRuntimeException());
        return;
      }
      if (request.hasStartGroup() && request.getStartGroup() != 0) {
        out.onError(
            Status.OUT_OF_RANGE
                .withDescription(
                    "start_group "
                        + request.getStartGroup()
                        + ": this cluster has no lease groups, so start_revision is not a"
                        + " revision of it; list (which returns a revision R) and watch from R + 1")
                .asRuntimeException());
        return;
      }
      // One group: a token holds the meta group's position alone.
      meta.watch(
          token.isEmpty()
              ? request
              : request.toBuilder()
                  .clearResumeToken()
                  .setStartRevision(Math.max(1, token.getOrDefault(0, 0L) + 1))
                  .build(),
          out);
      return;
    }
    Optional<String> ns = namespaceOf(request.getPrefix());
    if (ns.isEmpty() || !token.isEmpty()) {
      merged(request, token, out);
      return;
    }
    // gRPC takes the stream's handlers only during this call; the group may be known later.
    Deferred deferred = new Deferred(out);
    out.setOnCancelHandler(deferred::cancelled);
    out.setOnReadyHandler(deferred::ready);
    placements
        .groupToFollow(ns.get())
        .whenComplete(
            (group, error) -> {
              if (error != null) {
                deferred.fail(Status.fromThrowable(unwrap(error)).asRuntimeException());
                return;
              }
              String namespace = ns.get();
              if (group != 0 && !placements.hostedGroups().contains(group)) {
                deferred.fail(notHosted(List.of(group), "namespace " + namespace + " lives in"));
                return;
              }
              try {
                checkStart(group, namespace, request);
              } catch (StatusRuntimeException refused) {
                deferred.fail(refused);
                return;
              }
              deferred.attach(
                  s -> {
                    WatchHub.WatchStream stream = hub(group).start(request, s);
                    // Registered: a move from here on ends it. One that ended the namespace here
                    // between the check and the registration would leave it waiting for nothing.
                    if (group != 0 && hub(group).departed(namespace) && !holds(group, namespace)) {
                      stream.close(behind(group, namespace).getStatus());
                    }
                    return stream;
                  },
                  out);
            });
    deferred.methodReturns();
  }

  /**
   * Checks that a watch of {@code namespace}, followed in {@code group}, can start at the request's
   * start_revision: that it is a revision of {@code group} from since the namespace came to it.
   * Fails with the status the watch ends with otherwise: OUT_OF_RANGE (a revision of a group the
   * namespace has left, or from before it came: list again), FAILED_PRECONDITION (a bare
   * start_revision on a namespace that has moved, which could be of any group it lived in),
   * UNAVAILABLE (this node's replicas are behind the namespace's move: retry).
   */
  void checkStart(int group, String namespace, WatchRequest request) {
    long start = request.getStartRevision();
    boolean grouped = request.hasStartGroup();
    int startGroup = request.getStartGroup();
    if (group == 0) {
      if (grouped && startGroup != 0) {
        throw moved(namespace, start, startGroup, group);
      }
      return;
    }
    Optional<PlacementResponse> held = hub(group).core().placement(namespace);
    if (held.isEmpty() || held.get().getGroup() != group) {
      long epoch = meta.core().placement(namespace).map(PlacementResponse::getEpoch).orElse(0L);
      if (epoch >= 2 || hub(group).departed(namespace)) {
        throw behind(group, namespace);
      }
      // Placed for the first time, and the group's adoption not applied here yet: the namespace
      // has had no revisions of another group.
      if (start > 0 && grouped && startGroup != group) {
        throw moved(namespace, start, startGroup, group);
      }
      return;
    }
    if (start == 0) {
      return;
    }
    PlacementResponse p = held.get();
    boolean moved = p.getEpoch() >= 2;
    long adopted = p.getRevision();
    if (grouped && startGroup != group) {
      if (placements.hostedGroups().contains(startGroup)
          && hub(startGroup)
              .core()
              .placement(namespace)
              .filter(q -> q.getGroup() == startGroup && q.getEpoch() > p.getEpoch())
              .isPresent()) {
        // The namespace moved to the client's group and this node's meta replica has not heard.
        throw behind(group, namespace);
      }
      throw moved(namespace, start, startGroup, group);
    }
    if (moved && start <= adopted) {
      throw moved(namespace, start, grouped ? startGroup : -1, group);
    }
    if (moved && !grouped) {
      throw Status.FAILED_PRECONDITION
          .withDescription(
              "namespace "
                  + namespace
                  + " has moved between lease groups, whose revisions do not compare, so"
                  + " start_revision "
                  + start
                  + " alone does not say which group it counts in: pass start_group too (a list's"
                  + " or a watch message's group)")
          .asRuntimeException();
    }
  }

  /** Whether this node's replica of lease group {@code group} holds {@code namespace}. */
  private boolean holds(int group, String namespace) {
    return hub(group).core().placement(namespace).filter(p -> p.getGroup() == group).isPresent();
  }

  private static StatusRuntimeException moved(
      String namespace, long start, int startGroup, int group) {
    return Status.OUT_OF_RANGE
        .withDescription(
            "start_revision "
                + start
                + (startGroup >= 0 ? " of group " + startGroup : "")
                + " is from before namespace "
                + namespace
                + " came to group "
                + group
                + ", whose revisions are not the same: list (which returns a revision R and its"
                + " group) and watch from R + 1")
        .asRuntimeException();
  }

  private static StatusRuntimeException behind(int group, String namespace) {
    return Status.UNAVAILABLE
        .withDescription(
            "this node has not applied the latest move of namespace "
                + namespace
                + " in every group yet (it follows group "
                + group
                + "); retry")
        .asRuntimeException();
  }

  /**
   * A watch across every group this node serves, merged on one stream: from the token's positions,
   * or from now.
   */
  private void merged(
      WatchRequest request, Map<Integer, Long> token, ServerCallStreamObserver<WatchFrame> out) {
    if (token.isEmpty() && request.getStartRevision() != 0) {
      out.onError(
          Status.FAILED_PRECONDITION
              .withDescription(
                  "prefix \""
                      + request.getPrefix()
                      + "\" spans namespaces, and this cluster spreads them over lease groups,"
                      + " whose revisions do not compare: resume from a resume_token (each"
                      + " message of such a watch carries one, and so does a list across"
                      + " namespaces), not from start_revision")
              .asRuntimeException());
      return;
    }
    List<Integer> wanted;
    try {
      wanted = groupsOf(request);
    } catch (StatusRuntimeException refused) {
      out.onError(refused);
      return;
    }
    List<Integer> missing =
        wanted.stream().filter(g -> g != 0 && !placements.hostedGroups().contains(g)).toList();
    if (!missing.isEmpty()) {
      out.onError(
          notHosted(
              missing,
              request.getGroupsCount() == 0
                  ? "a watch across namespaces follows every lease group, and"
                  : "this watch follows"));
      return;
    }
    Map<Integer, WatchHub> all = new TreeMap<>();
    for (int g : wanted) {
      all.put(g, hub(g));
    }
    Map<Integer, Long> from = new TreeMap<>();
    for (Map.Entry<Integer, WatchHub> e : all.entrySet()) {
      int g = e.getKey();
      from.put(
          g,
          token.isEmpty()
              ? e.getValue().core().applied().index() + 1
              // A group the token does not know (it came later): from its first revision.
              : Math.max(1, token.getOrDefault(g, 0L) + 1));
    }
    MergedWatch.start(request, all, from, out);
  }

  /**
   * The groups a watch across namespaces follows: those its request names, each the meta group (0)
   * or a lease group of the cluster, or else the meta group and every lease group the node serves.
   */
  private List<Integer> groupsOf(WatchRequest request) {
    List<Integer> reached = placements.reachedGroups();
    if (request.getGroupsCount() == 0) {
      List<Integer> all = new ArrayList<>();
      all.add(0);
      all.addAll(reached);
      return all;
    }
    TreeSet<Integer> named = new TreeSet<>();
    for (int g : request.getGroupsList()) {
      if (g != 0 && !reached.contains(g)) {
        throw Status.INVALID_ARGUMENT
            .withDescription(
                "groups: "
                    + Integer.toUnsignedString(g)
                    + " is not a group of this cluster (0, the meta group, or a lease group: "
                    + reached
                    + ")")
            .asRuntimeException();
      }
      if (!named.add(g)) {
        throw Status.INVALID_ARGUMENT
            .withDescription("groups: " + g + " is named twice")
            .asRuntimeException();
      }
    }
    return List.copyOf(named);
  }

  /**
   * A watch this node cannot serve: lease groups sit on subsets of the nodes, and it is not a
   * member of {@code groups}. UNAVAILABLE, so that a client tries another node; the SDK's watches
   * do.
   */
  private StatusRuntimeException notHosted(List<Integer> groups, String why) {
    Map<Integer, List<String>> addresses = placements.memberAddresses();
    StringBuilder members = new StringBuilder();
    for (int g : groups) {
      List<String> of = addresses.getOrDefault(g, List.of());
      if (!of.isEmpty()) {
        members.append(members.length() == 0 ? "" : ";").append(g).append('=');
        members.append(String.join(",", of));
      }
    }
    Metadata trailers = new Metadata();
    if (members.length() > 0) {
      trailers.put(WatchTrailers.GROUP_MEMBERS, members.toString());
    }
    return Status.UNAVAILABLE
        .withDescription(
            why
                + " lease "
                + (groups.size() == 1 ? "group " + groups.get(0) : "groups " + groups)
                + ", which this node is not a member of: watch through a member (trailer "
                + WatchTrailers.GROUP_MEMBERS.name()
                + " names them; a watch across namespaces may follow some groups on each, with"
                + " groups set)")
        .asRuntimeException(trailers);
  }

  private static StatusRuntimeException invalid(String rule) {
    return Status.INVALID_ARGUMENT.withDescription("resume_token: " + rule).asRuntimeException();
  }

  private static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof java.util.concurrent.CompletionException
            || e instanceof java.util.concurrent.ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  /**
   * A stream whose watch starts once its group is known: what gRPC reports before then (ready,
   * cancelled) is passed on when it starts.
   */
  private static final class Deferred {
    private final ServerCallStreamObserver<WatchFrame> out;
    private volatile WatchHub.WatchStream stream;
    private volatile boolean cancelled;
    private boolean failed;

    /**
     * Whether gRPC's thread may still be in the service method: a watch started then must not be
     * woken here, as gRPC reports the stream ready once the method has returned, and the stream
     * must not be written from two threads at once (see {@link Watcher}).
     */
    private volatile boolean inMethod = true;

    Deferred(ServerCallStreamObserver<WatchFrame> out) {
      this.out = out;
    }

    void ready() {
      WatchHub.WatchStream s = stream;
      if (s != null) {
        s.ready();
      }
    }

    void cancelled() {
      cancelled = true;
      WatchHub.WatchStream s = stream;
      if (s != null) {
        s.cancelled();
      }
    }

    void methodReturns() {
      inMethod = false;
    }

    void attach(
        Function<ServerCallStreamObserver<WatchFrame>, WatchHub.WatchStream> start,
        ServerCallStreamObserver<WatchFrame> out) {
      WatchHub.WatchStream s = start.apply(out);
      stream = s;
      // Set before the check: a ready gRPC reports from here on reaches the watch. One it
      // reported before went nowhere, so it is reported again, unless the method is still
      // running (gRPC reports ready only after it). A ready reported twice schedules once.
      if (cancelled) {
        s.cancelled();
      } else if (!inMethod && out.isReady()) {
        s.ready();
      }
    }

    synchronized void fail(StatusRuntimeException status) {
      if (failed || cancelled) {
        return;
      }
      failed = true;
      try {
        out.onError(status);
      } catch (RuntimeException alreadyGone) {
        // The client went away first.
      }
    }
  }
}
