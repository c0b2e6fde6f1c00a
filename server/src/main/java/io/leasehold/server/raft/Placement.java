package io.leasehold.server.raft;

import com.google.protobuf.util.Timestamps;
import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireManyResponse;
import io.leasehold.proto.v1.AdoptNamespace;
import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineQueryItem;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.proto.v1.EndedLease;
import io.leasehold.proto.v1.GetSessionResponse;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.PlaceNamespace;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.ResumeToken;
import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.core.Limits;
import io.leasehold.statemachine.core.LogFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Sends each client command and read to the group its namespace lives in
 * (docs/design/multi-raft.md, "Placement" and "Requests that span groups"). The meta group's
 * placement table, as this node has applied it, says where a namespace lives; a namespace without a
 * placement is the meta group's for reads, and is placed by its first write: the meta group records
 * the placement (on the lease group with the fewest namespaces that has a leader this node knows
 * of), the lease group adopts the namespace, and the write goes there.
 *
 * <p>A group refuses commands for a namespace it does not own ({@code WrongGroup}), so an old table
 * never lets two groups take writes for one namespace: this node catches up with the meta group,
 * adopts again where a first placement's adoption is missing (its node failed between the two), and
 * sends the command once more. A command whose names fall in several groups (a Renew, an
 * AcquireMany) is split into one command per group, sent in parallel, and the replies joined in the
 * caller's order.
 *
 * <p>A namespace this node sees placed is routed without asking the meta group; a linearizable read
 * of a namespace it sees unplaced first catches up with the meta group, which may have placed it
 * since. A placement changes only by a move ({@link NamespaceMover}): a group that froze the
 * namespace answers {@code Moving} and applies nothing, and the command goes again once this node's
 * meta replica has caught up, wherever the namespace then lives; an old placement costs a
 * WrongGroup answer and a retry, as above.
 */
final class Placement {
  private final Supplier<LeaseCore> meta;
  private final Function<LogCommand, CompletableFuture<LogReply>> proposeToMeta;
  private final BiFunction<ReadQuery, Boolean, CompletableFuture<ReadReply>> readMeta;
  private final Supplier<CompletableFuture<?>> metaCaughtUp;
  private final LeaseGroups groups;
  private final SessionParts sessionParts;

  /** What {@link #located} answers for a namespace that has no placement and got none. */
  private static final int UNPLACED = -1;

  /** First placements in flight on this node, by namespace: one meta write each. */
  private final Map<String, CompletableFuture<Integer>> placing = new ConcurrentHashMap<>();

  Placement(
      Supplier<LeaseCore> meta,
      Function<LogCommand, CompletableFuture<LogReply>> proposeToMeta,
      BiFunction<ReadQuery, Boolean, CompletableFuture<ReadReply>> readMeta,
      Supplier<CompletableFuture<?>> metaCaughtUp,
      LeaseGroups groups,
      SessionParts sessionParts) {
    this.meta = meta;
    this.proposeToMeta = proposeToMeta;
    this.readMeta = readMeta;
    this.metaCaughtUp = metaCaughtUp;
    this.groups = groups;
    this.sessionParts = sessionParts;
  }

  /** Whether this node serves lease groups: otherwise everything is the meta group's. */
  boolean active() {
    return groups.any();
  }

  // ---- writes ----

  /**
   * How long a command naming a namespace that is moving waits for the move to end before it fails
   * as unavailable (the client retries).
   */
  static final Duration MOVE_WAIT = Duration.ofSeconds(10);

  /** The pause before a command answered Moving goes again. */
  private static final Duration MOVE_PAUSE = Duration.ofMillis(50);

  /** Proposes a command to the group(s) its names live in; others to the meta group. */
  CompletableFuture<LogReply> propose(LogCommand command) {
    return propose(command, System.nanoTime() + MOVE_WAIT.toNanos());
  }

  /**
   * As {@link #propose(LogCommand)}; a move of its namespace is waited for until {@code deadline}.
   */
  private CompletableFuture<LogReply> propose(LogCommand command, long deadline) {
    // Sessions live in the meta group; their parts in lease groups follow it (SessionParts).
    if (command.getCommandCase() == LogCommand.CommandCase.KEEP_ALIVE) {
      return proposeToMeta.apply(command).thenCompose(sessionParts::afterKeepAlive);
    }
    if (command.getCommandCase() == LogCommand.CommandCase.CLOSE_SESSION) {
      long session = command.getCloseSession().getSession();
      return proposeToMeta
          .apply(command)
          .thenCompose(reply -> sessionParts.afterClose(session, reply));
    }
    List<String> names = names(command);
    if (names.isEmpty()) {
      return proposeToMeta.apply(command);
    }
    List<String> namespaces = names.stream().map(LeaseCore::namespaceOf).distinct().toList();
    // Only a grant places a namespace: every other command needs a lease, which lives in a placed
    // namespace or, unplaced, in the meta group.
    boolean grants =
        command.getCommandCase() == LogCommand.CommandCase.ACQUIRE
            || command.getCommandCase() == LogCommand.CommandCase.ACQUIRE_MANY;
    List<CompletableFuture<Integer>> located =
        namespaces.stream().map(ns -> groupOf(ns, grants)).toList();
    return CompletableFuture.allOf(located.toArray(CompletableFuture[]::new))
        .thenCompose(
            ignored -> {
              Map<String, Integer> groupOf = new LinkedHashMap<>();
              for (int i = 0; i < namespaces.size(); i++) {
                groupOf.put(namespaces.get(i), located.get(i).join());
              }
              if (groupOf.values().stream().distinct().count() == 1) {
                return sendWithRepair(groupOf.values().iterator().next(), command, true, deadline);
              }
              return split(command, groupOf, deadline);
            });
  }

  /**
   * Sends to {@code group}; a WrongGroup answer is repaired and the command sent once more, and a
   * Moving answer waited out until {@code deadline}.
   */
  private CompletableFuture<LogReply> sendWithRepair(
      int group, LogCommand command, boolean mayRetry, long deadline) {
    return send(group, command)
        .thenCompose(
            reply -> {
              if (reply.hasMoving()) {
                return afterMove(reply.getMoving().getNamespace(), command, deadline);
              }
              if (!reply.hasWrongGroup()) {
                return CompletableFuture.completedFuture(reply);
              }
              String ns = reply.getWrongGroup().getNamespace();
              if (!mayRetry) {
                return CompletableFuture.failedFuture(
                    new ConsensusUnavailableException(
                        "namespace "
                            + ns
                            + " is not in group "
                            + group
                            + " that this node's placement names; retry",
                        null));
              }
              return repair(ns).thenCompose(g -> sendWithRepair(g, command, false, deadline));
            });
  }

  /**
   * A group answered that {@code ns} is moving, and applied nothing: once this node's meta replica
   * has caught up, the command goes again wherever the namespace then lives, after a short pause,
   * until {@code deadline}.
   */
  private CompletableFuture<LogReply> afterMove(String ns, LogCommand command, long deadline) {
    return again(
        deadline,
        "namespace " + ns + " is moving to another lease group; retry",
        () -> propose(command, deadline));
  }

  /**
   * After a short pause and once this node's meta replica has caught up, {@code call} again; fails
   * {@code UNAVAILABLE} with {@code why} once {@code deadline} has passed.
   */
  private <T> CompletableFuture<T> again(
      long deadline, String why, Supplier<CompletableFuture<T>> call) {
    long now = System.nanoTime();
    if (now > deadline) {
      return CompletableFuture.failedFuture(new ConsensusUnavailableException(why, null));
    }
    long pauseMillis =
        Math.min(TimeUnit.NANOSECONDS.toMillis(deadline - now) + 1, MOVE_PAUSE.toMillis());
    return CompletableFuture.runAsync(
            () -> {}, CompletableFuture.delayedExecutor(pauseMillis, TimeUnit.MILLISECONDS))
        .thenCompose(paused -> metaCaughtUp.get())
        .thenCompose(caughtUp -> call.get());
  }

  /**
   * After a WrongGroup: catches up with the meta group, and adopts a first placement whose adoption
   * is missing. Completes with the namespace's group.
   */
  private CompletableFuture<Integer> repair(String ns) {
    return metaCaughtUp
        .get()
        .thenCompose(
            caughtUp -> {
              Optional<PlacementResponse> p = meta.get().placement(ns);
              if (p.isEmpty() || p.get().getGroup() == 0) {
                return CompletableFuture.completedFuture(0);
              }
              return adopt(p.get());
            });
  }

  private CompletableFuture<LogReply> send(int group, LogCommand command) {
    if (group == 0) {
      return proposeToMeta.apply(command);
    }
    Optional<GroupDoor> g = groups.door(group);
    if (g.isEmpty()) {
      return notHosted(group);
    }
    long session = SessionParts.attaches(command);
    CompletableFuture<LogReply> reply =
        session != 0
            ? sessionParts
                .prepare(g.get(), command, session)
                .thenCompose(prepared -> g.get().propose(command))
            : g.get().propose(command);
    // An acquisition's revision with its group: a blocked acquirer watches the name from there.
    return reply.thenApply(
        r ->
            r.hasAcquire()
                ? r.toBuilder().setAcquire(r.getAcquire().toBuilder().setGroup(group)).build()
                : r);
  }

  /**
   * The group {@code ns} lives in. Unplaced: the meta group's for a read; for a write (and once the
   * meta group's format carries placements), placed now.
   */
  private CompletableFuture<Integer> groupOf(String ns, boolean placeIfNone) {
    return located(ns, placeIfNone).thenApply(g -> Math.max(g, 0));
  }

  /**
   * As {@link #groupOf}, but {@link #UNPLACED} where the namespace has no placement and none was
   * made (not asked to, or no lease group could take it yet).
   */
  private CompletableFuture<Integer> located(String ns, boolean placeIfNone) {
    Optional<PlacementResponse> p = meta.get().placement(ns);
    if (p.isPresent()) {
      return CompletableFuture.completedFuture(p.get().getGroup());
    }
    if (!placeIfNone || meta.get().logFormat() < LogFormat.GROUPS) {
      return CompletableFuture.completedFuture(UNPLACED);
    }
    CompletableFuture<Integer> mine = new CompletableFuture<>();
    CompletableFuture<Integer> running = placing.putIfAbsent(ns, mine);
    if (running != null) {
      return running;
    }
    placeNow(ns)
        .whenComplete(
            (group, error) -> {
              placing.remove(ns, mine);
              if (error != null) {
                mine.completeExceptionally(error);
              } else {
                mine.complete(group);
              }
            });
    return mine;
  }

  private CompletableFuture<Integer> placeNow(String ns) {
    List<Integer> led = ledGroups();
    if (led.isEmpty()) {
      // No lease group has a leader yet (the cluster is forming, or a rolling restart is adding
      // groups): the namespace stays unplaced, the meta group's, until one has.
      return CompletableFuture.completedFuture(UNPLACED);
    }
    LogCommand place =
        LogCommand.newBuilder()
            .setPlaceNamespace(PlaceNamespace.newBuilder().setNamespace(ns).addAllGroups(led))
            .build();
    return proposeToMeta
        .apply(place)
        .thenCompose(
            reply -> {
              if (!reply.hasPlaceNamespace()) {
                return CompletableFuture.failedFuture(
                    new InvalidArgumentException(
                        "name", "namespace " + ns + " could not be placed: " + reply));
              }
              PlacementResponse placed = reply.getPlaceNamespace();
              return placed.getGroup() == 0 ? CompletableFuture.completedFuture(0) : adopt(placed);
            });
  }

  /** The lease groups this node reaches and knows a leader of, by number. */
  private List<Integer> ledGroups() {
    return groups.all().stream()
        .filter(g -> groups.door(g).map(GroupDoor::hasLeader).orElse(false))
        .toList();
  }

  /**
   * Has the lease group adopt a namespace's first placement (epoch 1; later epochs are a move's,
   * which adopts with the state it copied), raising its log format first if it lags.
   */
  private CompletableFuture<Integer> adopt(PlacementResponse placed) {
    int number = placed.getGroup();
    Optional<GroupDoor> g = groups.door(number);
    if (g.isEmpty()) {
      return notHosted(number);
    }
    if (placed.getEpoch() != 1) {
      return CompletableFuture.completedFuture(number);
    }
    LogCommand adopt =
        LogCommand.newBuilder()
            .setAdoptNamespace(
                AdoptNamespace.newBuilder()
                    .setNamespace(placed.getNamespace())
                    .setEpoch(placed.getEpoch())
                    .setGroup(number)
                    .setFloor(placed.getFloor()))
            .build();
    return g.get()
        .raiseFormat(meta.get().logFormat())
        .thenCompose(ok -> g.get().propose(adopt))
        .thenApply(
            reply -> {
              if (!reply.hasAdoptNamespace()) {
                throw new java.util.concurrent.CompletionException(
                    new ConsensusUnavailableException(
                        "lease group "
                            + number
                            + " did not adopt "
                            + placed.getNamespace()
                            + ": "
                            + reply,
                        null));
              }
              return number;
            });
  }

  /**
   * One command per group for a Renew or AcquireMany whose names live in several groups, joined in
   * the caller's order. An all-or-nothing AcquireMany must stay within one group.
   */
  private CompletableFuture<LogReply> split(
      LogCommand command, Map<String, Integer> groupOf, long deadline) {
    switch (command.getCommandCase()) {
      case RENEW -> {
        return scatter(
                command.getRenew().getItemsList(),
                item -> groupOf.get(LeaseCore.namespaceOf(item.getName())),
                (group, part) ->
                    sendWithRepair(
                        group,
                        command.toBuilder()
                            .setRenew(command.getRenew().toBuilder().clearItems().addAllItems(part))
                            .build(),
                        true,
                        deadline),
                reply -> reply.getRenew().getResultsList())
            .thenApply(
                joined -> {
                  List<RenewResponse> parts =
                      joined.parts().stream().map(LogReply::getRenew).toList();
                  RenewResponse.Builder out =
                      RenewResponse.newBuilder()
                          .addAllResults(joined.results())
                          .setRevision(
                              parts.stream().mapToLong(RenewResponse::getRevision).max().orElse(0));
                  shortest(
                          parts,
                          RenewResponse::hasHeartbeatInterval,
                          RenewResponse::getHeartbeatInterval)
                      .ifPresent(out::setHeartbeatInterval);
                  return LogReply.newBuilder().setRenew(out).build();
                });
      }
      case ACQUIRE_MANY -> {
        AcquireManyRequest asked = command.getAcquireMany();
        if (asked.getAllOrNothing()) {
          return CompletableFuture.failedFuture(
              new InvalidArgumentException(
                  "all_or_nothing",
                  "the names live in several Raft groups "
                      + groupOf
                      + " (namespace to group); all or nothing holds within one group: ask for"
                      + " each namespace's names on their own"));
        }
        return scatter(
                asked.getItemsList(),
                item -> groupOf.get(LeaseCore.namespaceOf(item.getName())),
                (group, part) -> {
                  AcquireManyRequest.Builder request =
                      asked.toBuilder().clearItems().addAllItems(part);
                  if (!asked.getRequestId().isEmpty()) {
                    // Retries dedupe per group: each part is its own request there.
                    request.setRequestId(asked.getRequestId() + "/" + group);
                  }
                  return sendWithRepair(
                      group, command.toBuilder().setAcquireMany(request).build(), true, deadline);
                },
                reply -> reply.getAcquireMany().getResultsList())
            .thenApply(
                joined -> {
                  List<AcquireManyResponse> parts =
                      joined.parts().stream().map(LogReply::getAcquireMany).toList();
                  AcquireManyResponse.Builder out =
                      AcquireManyResponse.newBuilder()
                          .addAllResults(joined.results())
                          .setRevision(
                              parts.stream()
                                  .mapToLong(AcquireManyResponse::getRevision)
                                  .max()
                                  .orElse(0))
                          .setGranted(
                              parts.stream().mapToInt(AcquireManyResponse::getGranted).sum());
                  shortest(
                          parts,
                          AcquireManyResponse::hasHeartbeatInterval,
                          AcquireManyResponse::getHeartbeatInterval)
                      .ifPresent(out::setHeartbeatInterval);
                  return LogReply.newBuilder().setAcquireMany(out).build();
                });
      }
      default -> {
        return CompletableFuture.failedFuture(
            new InvalidArgumentException(
                "name", "a " + command.getCommandCase() + " names one lease, in one namespace"));
      }
    }
  }

  /** The parts' replies, in group order, and their results put back in the items' order. */
  private record Joined<P, R>(List<P> parts, List<R> results) {}

  /**
   * Sends one part a group, each with that group's items in the caller's order, and joins the
   * parts' results (one per item, in the part's order) back in the order of {@code items}.
   */
  private static <I, P, R> CompletableFuture<Joined<P, R>> scatter(
      List<I> items,
      Function<I, Integer> groupOf,
      BiFunction<Integer, List<I>, CompletableFuture<P>> send,
      Function<P, List<R>> resultsOf) {
    Map<Integer, List<Integer>> positions = new LinkedHashMap<>();
    for (int i = 0; i < items.size(); i++) {
      positions.computeIfAbsent(groupOf.apply(items.get(i)), g -> new ArrayList<>()).add(i);
    }
    List<List<Integer>> byPart = new ArrayList<>(positions.values());
    List<CompletableFuture<P>> sent = new ArrayList<>();
    positions.forEach(
        (group, at) -> sent.add(send.apply(group, at.stream().map(items::get).toList())));
    return CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new))
        .thenApply(
            ignored -> {
              List<P> parts = sent.stream().map(CompletableFuture::join).toList();
              List<R> results = new ArrayList<>(java.util.Collections.nCopies(items.size(), null));
              for (int p = 0; p < parts.size(); p++) {
                List<R> got = resultsOf.apply(parts.get(p));
                List<Integer> at = byPart.get(p);
                for (int k = 0; k < at.size(); k++) {
                  results.set(at.get(k), got.get(k));
                }
              }
              return new Joined<>(parts, results);
            });
  }

  /** The shortest heartbeat interval among the parts that suggest one. */
  private static <P> Optional<com.google.protobuf.Duration> shortest(
      List<P> parts,
      java.util.function.Predicate<P> has,
      Function<P, com.google.protobuf.Duration> interval) {
    return parts.stream()
        .filter(has)
        .map(interval)
        .min(
            Comparator.comparingLong(com.google.protobuf.Duration::getSeconds)
                .thenComparingInt(com.google.protobuf.Duration::getNanos));
  }

  private static <T> CompletableFuture<T> notHosted(int group) {
    return CompletableFuture.failedFuture(
        new ConsensusUnavailableException(
            "lease group " + group + " is neither hosted on this node nor reachable from it",
            null));
  }

  /** The lease names a client command carries, in its order; empty for other commands. */
  static List<String> names(LogCommand c) {
    return switch (c.getCommandCase()) {
      case ACQUIRE -> List.of(c.getAcquire().getName());
      case RELEASE -> List.of(c.getRelease().getName());
      case UPDATE -> List.of(c.getUpdate().getName());
      case TRANSFER -> List.of(c.getTransfer().getName());
      case ACCEPT_TRANSFER -> List.of(c.getAcceptTransfer().getName());
      case REVOKE -> List.of(c.getRevoke().getName());
      case RENEW -> c.getRenew().getItemsList().stream().map(RenewItem::getName).toList();
      case ACQUIRE_MANY ->
          c.getAcquireMany().getItemsList().stream().map(AcquireManyItem::getName).toList();
      default -> List.of();
    };
  }

  // ---- reads ----

  /**
   * The deadlines the expiry tickers keep for these leases: each asked of the leader of the group
   * its name lives in (sessions, and names of unplaced namespaces, of the meta group's), joined in
   * the query's order.
   */
  CompletableFuture<DeadlineReply> leaderDeadlines(
      DeadlineQuery query, Function<DeadlineQuery, CompletableFuture<DeadlineReply>> metaLeader) {
    Function<DeadlineQueryItem, Integer> groupOf =
        item ->
            item.getSession() != 0
                ? 0
                : meta.get()
                    .placement(LeaseCore.namespaceOf(item.getName()))
                    .map(PlacementResponse::getGroup)
                    .orElse(0);
    if (query.getItemsList().stream().allMatch(item -> groupOf.apply(item) == 0)) {
      return metaLeader.apply(query);
    }
    return scatter(
            query.getItemsList(),
            groupOf,
            (group, part) -> {
              DeadlineQuery asked = DeadlineQuery.newBuilder().addAllItems(part).build();
              if (group == 0) {
                return metaLeader.apply(asked);
              }
              return groups
                  .door(group)
                  .map(g -> g.leaderDeadlines(asked))
                  .orElseGet(() -> notHosted(group));
            },
            DeadlineReply::getItemsList)
        .thenApply(joined -> DeadlineReply.newBuilder().addAllItems(joined.results()).build());
  }

  /**
   * The group whose revisions a list or a watch of {@code ns} reports and follows (0: the meta
   * group). A namespace without a placement is placed now, as its first grant would place it: a
   * list read from the meta group would otherwise return a meta revision that a watch could not
   * follow once a grant had placed the namespace on a lease group, whose revisions are its own.
   * Fails (unavailable, to retry) while lease groups serve this node but none can take it yet.
   */
  CompletableFuture<Integer> groupToFollow(String ns) {
    Optional<PlacementResponse> p = meta.get().placement(ns);
    if (p.isPresent() || !active()) {
      return CompletableFuture.completedFuture(p.map(PlacementResponse::getGroup).orElse(0));
    }
    // Placed since this node last heard? Catch up with the meta group before placing.
    return metaCaughtUp
        .get()
        .thenCompose(caughtUp -> located(ns, true))
        .thenCompose(
            g ->
                g != UNPLACED
                    ? CompletableFuture.completedFuture(g)
                    : CompletableFuture.failedFuture(
                        new ConsensusUnavailableException(
                            "namespace "
                                + ns
                                + " has no lease group yet, and none can take it now (the"
                                + " cluster's lease groups are starting); retry",
                            null)));
  }

  /** A read of the group a name's namespace lives in; a list across namespaces, of every group. */
  CompletableFuture<ReadReply> read(ReadQuery query, boolean stale) {
    Optional<String> ns =
        switch (query.getQueryCase()) {
          case GET -> Optional.of(LeaseCore.namespaceOf(query.getGet().getName()));
          case SERVICE -> Optional.of("service");
          case HISTORY ->
              query.getHistory().getName().isEmpty()
                  ? Optional.empty()
                  : Optional.of(LeaseCore.namespaceOf(query.getHistory().getName()));
          case LIST ->
              query.getList().getPrefix().indexOf('/') > 0
                  ? Optional.of(LeaseCore.namespaceOf(query.getList().getPrefix()))
                  : Optional.empty();
          default -> Optional.empty();
        };
    if (ns.isPresent()) {
      return readNamespace(ns.get(), query, stale, System.nanoTime() + MOVE_WAIT.toNanos());
    }
    if (query.getQueryCase() == ReadQuery.QueryCase.LIST) {
      return listEverywhere(query, stale, System.nanoTime() + MOVE_WAIT.toNanos());
    }
    if (query.getQueryCase() == ReadQuery.QueryCase.GET_SESSION) {
      return sessionEverywhere(query, stale);
    }
    if (query.getQueryCase() == ReadQuery.QueryCase.HISTORY) {
      return holderHistoryEverywhere(query, stale);
    }
    return readMeta.apply(query, stale);
  }

  /**
   * A read of one namespace, from the group this node's placement table names. A linearizable one
   * is kept only if that group owned the namespace, not frozen for a move, from the revision it
   * read at until it answered ({@link LeaseCore#servesReads}): a table behind a move names the
   * group the namespace left, which has dropped it or holds only the copy it froze. Otherwise this
   * node catches up with the meta group and reads again where the namespace then lives, after a
   * short pause while it moves, until {@code deadline}. A stale read is answered where it is.
   */
  private CompletableFuture<ReadReply> readNamespace(
      String ns, ReadQuery query, boolean stale, long deadline) {
    // A list's revision is where a watch of the same prefix starts: both follow one group.
    CompletableFuture<Integer> group =
        query.getQueryCase() == ReadQuery.QueryCase.LIST
            ? groupToFollow(ns)
            : locateForRead(ns, stale);
    ReadQuery checked = stale ? query : query.toBuilder().addCheckServed(ns).build();
    return group.thenCompose(
        g ->
            readGroup(g, checked, stale)
                .thenCompose(
                    reply -> {
                      if (stale || reply.getServedList().contains(ns)) {
                        ReadReply answer = reply.toBuilder().clearServed().build();
                        return CompletableFuture.completedFuture(
                            answer.hasList() && g != 0
                                // A list's revision with its group: where a watch starts.
                                ? answer.toBuilder()
                                    .setList(answer.getList().toBuilder().setGroup(g))
                                    .build()
                                : answer);
                      }
                      return again(
                          deadline, notServed(ns), () -> readNamespace(ns, query, stale, deadline));
                    }));
  }

  private static String notServed(String ns) {
    return "namespace "
        + ns
        + " is moving, or this node has not caught up with where it lives; retry";
  }

  /**
   * A holder's ended leases in every group, newest first by their leader-stamped end (revisions of
   * different groups do not compare), cut to the limit asked.
   */
  private CompletableFuture<ReadReply> holderHistoryEverywhere(ReadQuery query, boolean stale) {
    int limit = query.getHistory().getLimit();
    return readEverywhere(query, stale)
        .thenApply(
            replies -> {
              List<EndedLease> ended = new ArrayList<>();
              replies.forEach(r -> ended.addAll(r.getHistory().getLeasesList()));
              ended.sort(
                  Comparator.comparing(
                          (EndedLease e) -> Timestamps.toMicros(e.getEndedAt()),
                          Comparator.reverseOrder())
                      .thenComparing(EndedLease::getName));
              List<EndedLease> page =
                  limit > 0 && ended.size() > limit ? ended.subList(0, limit) : ended;
              return ReadReply.newBuilder()
                  .setHistory(
                      replies.get(0).getHistory().toBuilder().clearLeases().addAllLeases(page))
                  .build();
            });
  }

  /**
   * A session as the meta group holds it, with the leases attached to its parts in every lease
   * group: their names merged in name order and cut to the page, and counted.
   */
  private CompletableFuture<ReadReply> sessionEverywhere(ReadQuery query, boolean stale) {
    int limit =
        query.getGetSession().getLimit() <= 0
            ? Limits.MAX_LIST_LIMIT
            : query.getGetSession().getLimit();
    return readEverywhere(query, stale)
        .thenApply(
            replies -> {
              GetSessionResponse whole = replies.get(0).getGetSession();
              if (!whole.getFound()) {
                return replies.get(0);
              }
              List<String> leases = new ArrayList<>(whole.getLeasesList());
              long attached = whole.getSession().getLeases();
              boolean more = whole.getMore();
              for (ReadReply reply : replies.subList(1, replies.size())) {
                GetSessionResponse part = reply.getGetSession();
                if (part.getFound()) {
                  leases.addAll(part.getLeasesList());
                  attached += part.getSession().getLeases();
                  more |= part.getMore();
                }
              }
              leases.sort(Comparator.naturalOrder());
              if (leases.size() > limit) {
                leases = leases.subList(0, limit);
                more = true;
              }
              return ReadReply.newBuilder()
                  .setGetSession(
                      whole.toBuilder()
                          .clearLeases()
                          .addAllLeases(leases)
                          .setMore(more)
                          .setSession(whole.getSession().toBuilder().setLeases(attached)))
                  .build();
            });
  }

  private CompletableFuture<Integer> locateForRead(String ns, boolean stale) {
    Optional<PlacementResponse> p = meta.get().placement(ns);
    if (p.isPresent()) {
      return CompletableFuture.completedFuture(p.get().getGroup());
    }
    if (stale) {
      return CompletableFuture.completedFuture(0);
    }
    // Placed since this node last heard? The meta group answers once this node caught up.
    return metaCaughtUp
        .get()
        .thenApply(caughtUp -> meta.get().placement(ns).map(PlacementResponse::getGroup).orElse(0));
  }

  private CompletableFuture<ReadReply> readGroup(int group, ReadQuery query, boolean stale) {
    if (group == 0) {
      return readMeta.apply(query, stale);
    }
    Optional<GroupDoor> g = groups.door(group);
    if (g.isEmpty()) {
      return notHosted(group);
    }
    return g.get().read(query, stale);
  }

  /**
   * A list that may span namespaces: every group's page, merged by name and cut to the page size.
   * Its revision is the meta group's; its resume token holds every group's (revisions are per
   * group), for a watch across namespaces to start from.
   */
  private CompletableFuture<ReadReply> listEverywhere(
      ReadQuery query, boolean stale, long deadline) {
    List<Integer> numbers = everyGroup();
    // Where this node's table says each moved namespace lives, once for every step.
    Map<String, Integer> moved = new java.util.HashMap<>();
    for (PlacementResponse p : meta.get().placements()) {
      movedTo(p.getNamespace()).ifPresent(g -> moved.put(p.getNamespace(), g));
    }
    List<CompletableFuture<ReadReply>> reads = new ArrayList<>();
    for (int group : numbers) {
      ReadQuery.Builder checked = query.toBuilder();
      if (!stale) {
        // Each group says which namespaces of its page, and of those the table says moved to it,
        // it served (unserved below).
        checked.setCheckListed(true);
        moved.forEach(
            (ns, owner) -> {
              if (owner == group) {
                checked.addCheckServed(ns);
              }
            });
      }
      reads.add(readGroup(group, checked.build(), stale));
    }
    return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
        .thenApply(ignored -> reads.stream().map(CompletableFuture::join).toList())
        .thenCompose(
            pages -> {
              Optional<String> unserved =
                  stale ? Optional.empty() : unserved(numbers, pages, moved);
              if (unserved.isEmpty()) {
                return CompletableFuture.completedFuture(merged(query, numbers, pages, moved));
              }
              return again(
                  deadline,
                  notServed(unserved.get()),
                  () -> listEverywhere(query, stale, deadline));
            });
  }

  /**
   * Of the namespaces in {@code pages} (each read in the group of {@code numbers} at its index),
   * the first one a linearizable list must not take as read: one whose names a page holds, or that
   * this node's table says moved, read in a group that did not own it, unfrozen, from its page's
   * revision on ({@link LeaseCore#servesReads}). {@code moved}: where this node's table says each
   * namespace that moved (or is moving) lives.
   */
  private Optional<String> unserved(
      List<Integer> numbers, List<ReadReply> pages, Map<String, Integer> moved) {
    for (int i = 0; i < pages.size(); i++) {
      int group = numbers.get(i);
      ReadReply page = pages.get(i);
      java.util.Set<String> namespaces = new java.util.TreeSet<>();
      for (Lease lease : page.getList().getLeasesList()) {
        String ns = LeaseCore.namespaceOf(lease.getName());
        if (moved.getOrDefault(ns, group) == group) {
          namespaces.add(ns);
        }
      }
      moved.forEach(
          (ns, owner) -> {
            if (owner == group) {
              namespaces.add(ns);
            }
          });
      for (String ns : namespaces) {
        if (!page.getServedList().contains(ns)) {
          return Optional.of(ns);
        }
      }
    }
    return Optional.empty();
  }

  /**
   * One page of every group's leases merged by name and cut to the page size. Its revision is the
   * meta group's; its resume token holds every group's (revisions are per group).
   */
  private ReadReply merged(
      ReadQuery query, List<Integer> numbers, List<ReadReply> pages, Map<String, Integer> moved) {
    ListRequest asked = query.getList();
    int limit = asked.getLimit() <= 0 ? Limits.MAX_LIST_LIMIT : asked.getLimit();

    // A namespace that moved (or is moving) may have a copy in its source until the
    // source drops it: each name is taken from the group its placement names.
    Map<String, Lease> byName = new java.util.TreeMap<>();
    Map<String, Integer> from = new java.util.HashMap<>();
    boolean more = false;
    ResumeToken.Builder token = ResumeToken.newBuilder();
    for (int i = 0; i < pages.size(); i++) {
      ReadReply page = pages.get(i);
      int group = numbers.get(i);
      for (Lease lease : page.getList().getLeasesList()) {
        if (moved.getOrDefault(LeaseCore.namespaceOf(lease.getName()), group) != group) {
          continue;
        }
        Integer before = from.putIfAbsent(lease.getName(), group);
        if (before == null) {
          byName.put(lease.getName(), lease);
        }
      }
      more |= page.getList().getMore();
      token.putThrough(group, page.getList().getRevision());
    }
    List<Lease> leases = new ArrayList<>(byName.values());
    if (leases.size() > limit) {
      leases = leases.subList(0, limit);
      more = true;
    }
    return ReadReply.newBuilder()
        .setList(
            ListResponse.newBuilder()
                .addAllLeases(leases)
                .setRevision(pages.get(0).getList().getRevision())
                .setResumeToken(token.build().toByteString())
                .setMore(more))
        .build();
  }

  /**
   * The group that alone holds a namespace's live state, if a move of it has begun or ended (the
   * source may still hold a copy); empty for any other namespace, which only one group holds.
   */
  private OptionalInt movedTo(String namespace) {
    Optional<PlacementResponse> p = meta.get().placement(namespace);
    return p.isPresent() && (p.get().getEpoch() > 1 || p.get().getMove() != 0)
        ? OptionalInt.of(p.get().getGroup())
        : OptionalInt.empty();
  }

  /** {@code query} read in the meta group and in every lease group this node hosts, in order. */
  private CompletableFuture<List<ReadReply>> readEverywhere(ReadQuery query, boolean stale) {
    return readEverywhere(everyGroup(), query, stale);
  }

  /** The meta group (0) and every lease group this node reaches, in order. */
  private List<Integer> everyGroup() {
    List<Integer> all = new ArrayList<>();
    all.add(0);
    all.addAll(groups.all());
    return all;
  }

  private CompletableFuture<List<ReadReply>> readEverywhere(
      List<Integer> all, ReadQuery query, boolean stale) {
    List<CompletableFuture<ReadReply>> reads =
        all.stream().map(g -> readGroup(g, query, stale)).toList();
    return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
        .thenApply(ignored -> reads.stream().map(CompletableFuture::join).toList());
  }
}
