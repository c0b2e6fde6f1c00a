package io.leasehold.server.raft;

import io.leasehold.proto.v1.AdoptNamespace;
import io.leasehold.proto.v1.DropNamespace;
import io.leasehold.proto.v1.FinishMove;
import io.leasehold.proto.v1.FreezeNamespace;
import io.leasehold.proto.v1.FreezeNamespaceResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.MoveOutcome;
import io.leasehold.proto.v1.NamespaceState;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.RecordMove;
import io.leasehold.proto.v1.StageNamespace;
import io.leasehold.proto.v1.UnfreezeNamespace;
import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.core.LogFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves namespaces to lease groups (docs/design/multi-raft.md, "Moving a namespace"), from another
 * lease group or from the meta group. A move is recorded in the meta group ({@link #move}); the
 * meta group's leader drives every recorded move to its end, one step after another, each a log
 * entry that is idempotent under the move's id: the source freezes the namespace and answers with
 * its state, the destination adopts that state, the meta group places the namespace there, and the
 * source drops it (the meta group, as a source, in the entry that places it). A new meta leader, or
 * this one after a failed step, takes each move up where the placement table says it is.
 *
 * <p>Until the adoption is sent a move may be abandoned (the source or the destination refused it
 * as invalid): the source unfreezes and the meta group forgets the move. Once sent, the adoption is
 * only sent again until the destination answers, as it may have applied it.
 */
final class NamespaceMover implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NamespaceMover.class);

  /**
   * Under log format 6, the most a move's adoption may carry: the state travels in one Raft entry,
   * and Ratis refuses an entry above its appender's buffer (4 MiB at least, RaftSettings). A larger
   * namespace's move is abandoned before the adoption is sent. Format 7 stages it in parts.
   */
  static final int MAX_ADOPTION_BYTES = 3 << 20;

  /**
   * From log format 7, the most state a move carries at all: the source's Freeze answers with the
   * whole state, and a Ratis reply is one gRPC message (64 MiB by default). A larger namespace is
   * not frozen, and its move is abandoned.
   */
  static final long MAX_MOVE_BYTES = 48L << 20;

  /** The field an adoption names when a part it names is not staged: the move goes on. */
  private static final String MISSING_PARTS = "adopt_namespace.staged_parts";

  /** How often the meta leader looks for moves to drive, and a waiting caller for their end. */
  static final Duration TICK = Duration.ofMillis(100);

  private final Supplier<LeaseCore> meta;
  private final Function<LogCommand, CompletableFuture<LogReply>> proposeToMeta;
  private final BooleanSupplier leadsMeta;
  private final LeaseGroups groups;
  private final int partBytes;
  private final ScheduledExecutorService timer;

  /** The move of each namespace whose failed step was last logged at INFO. */
  private final java.util.Map<String, Long> told = new ConcurrentHashMap<>();

  /** Namespaces with a step in flight from this node: one at a time each. */
  private final Set<String> driving = ConcurrentHashMap.newKeySet();

  NamespaceMover(
      Supplier<LeaseCore> meta,
      Function<LogCommand, CompletableFuture<LogReply>> proposeToMeta,
      BooleanSupplier leadsMeta,
      LeaseGroups groups,
      int partBytes) {
    this.partBytes = partBytes;
    this.meta = meta;
    this.proposeToMeta = proposeToMeta;
    this.leadsMeta = leadsMeta;
    this.groups = groups;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "leasehold-namespace-mover");
              t.setDaemon(true);
              return t;
            });
  }

  /** Starts driving recorded moves while this node leads the meta group. */
  void start() {
    if (groups.any()) {
      timer.scheduleWithFixedDelay(
          this::sweep, TICK.toMillis(), TICK.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Records a move of {@code namespace} to lease group {@code to} (or finds the same move under
   * way) and completes once it is done, with the namespace's placement; fails if it was abandoned
   * or {@code timeout} passed first.
   */
  CompletableFuture<PlacementResponse> move(String namespace, int to, Duration timeout) {
    if (!groups.any()) {
      return CompletableFuture.failedFuture(
          new InvalidArgumentException(
              "to_group", "this cluster has no lease groups: every namespace is the meta group's"));
    }
    if (!groups.all().contains(to)) {
      return CompletableFuture.failedFuture(
          new InvalidArgumentException(
              "to_group",
              "must be a lease group of this cluster, one of " + groups.all() + "; got " + to));
    }
    LogCommand record =
        LogCommand.newBuilder()
            .setRecordMove(RecordMove.newBuilder().setNamespace(namespace).setToGroup(to))
            .build();
    long deadline = System.nanoTime() + timeout.toNanos();
    return proposeToMeta
        .apply(record)
        .thenCompose(
            reply -> {
              if (reply.hasInvalid()) {
                return CompletableFuture.failedFuture(
                    new InvalidArgumentException(
                        reply.getInvalid().getField().replaceFirst("^record_move\\.", ""),
                        reply.getInvalid().getMessage()));
              }
              if (!reply.hasRecordMove()) {
                return CompletableFuture.failedFuture(
                    new IllegalStateException("the meta group answered a move with " + reply));
              }
              PlacementResponse recorded = reply.getRecordMove();
              if (recorded.getMove() == 0 || recorded.getGroup() == to) {
                // In that group already: moved before, or this move is done but for the drop.
                return CompletableFuture.completedFuture(recorded);
              }
              return awaitEnd(recorded, deadline);
            });
  }

  /** Completes once this node's meta replica shows the move's end. */
  private CompletableFuture<PlacementResponse> awaitEnd(PlacementResponse recorded, long deadline) {
    CompletableFuture<PlacementResponse> done = new CompletableFuture<>();
    String ns = recorded.getNamespace();
    Runnable check =
        new Runnable() {
          @Override
          public void run() {
            LeaseCore core = meta.get();
            // The record's entry is the move's id: until this replica applied it, it knows
            // nothing of the move.
            boolean knowsMove = core.applied().index() >= recorded.getMove();
            Optional<PlacementResponse> now = core.placement(ns);
            if (knowsMove && now.isPresent() && now.get().getEpoch() > recorded.getEpoch()) {
              done.complete(now.get().toBuilder().setMove(recorded.getMove()).build());
              return;
            }
            if (knowsMove && now.isPresent() && now.get().getMove() != recorded.getMove()) {
              done.completeExceptionally(
                  new MoveAbandonedException(
                      "move "
                          + recorded.getMove()
                          + " of namespace '"
                          + ns
                          + "' to group "
                          + recorded.getMovingTo()
                          + " was abandoned: a group refused it (the meta leader's log says why);"
                          + " it stays in group "
                          + now.get().getGroup()));
              return;
            }
            if (System.nanoTime() > deadline) {
              done.completeExceptionally(
                  new ConsensusUnavailableException(
                      "namespace '"
                          + ns
                          + "' is still moving to group "
                          + recorded.getMovingTo()
                          + " (move "
                          + recorded.getMove()
                          + "); the meta group's leader goes on with it: ask again to wait",
                      null));
              return;
            }
            try {
              timer.schedule(this, TICK.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException closed) {
              done.completeExceptionally(
                  new ConsensusUnavailableException("the node is stopping", null));
            }
          }
        };
    check.run();
    return done;
  }

  /** On the meta leader: one step of every move under way that has none in flight. */
  private void sweep() {
    try {
      if (!leadsMeta.getAsBoolean() || meta.get().logFormat() < LogFormat.GROUPS) {
        return;
      }
      for (PlacementResponse p : meta.get().placements()) {
        if (p.getMove() != 0 && driving.add(p.getNamespace())) {
          step(p)
              .whenComplete(
                  (ok, error) -> {
                    driving.remove(p.getNamespace());
                    if (error != null) {
                      // Once per move at INFO: a step that keeps failing is tried every tick.
                      boolean first =
                          !Long.valueOf(p.getMove())
                              .equals(told.put(p.getNamespace(), p.getMove()));
                      String why = RaftErrors.unwrap(error).toString();
                      if (first) {
                        LOG.info(
                            "move {} of namespace {}: will try again: {}",
                            p.getMove(),
                            p.getNamespace(),
                            why);
                      } else {
                        LOG.debug(
                            "move {} of namespace {}: will try again: {}",
                            p.getMove(),
                            p.getNamespace(),
                            why);
                      }
                    }
                  });
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("driving namespace moves: {}", e.toString());
    }
  }

  /** The next steps of a move, as the placement records it, to its end or a failure. */
  private CompletableFuture<Void> step(PlacementResponse p) {
    try {
      return steps(p);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private CompletableFuture<Void> steps(PlacementResponse p) {
    String ns = p.getNamespace();
    long move = p.getMove();
    if (p.getMovingTo() != 0) {
      Function<LogCommand, CompletableFuture<LogReply>> source = proposer(p.getGroup());
      GroupDoor destination = reached(p.getMovingTo());
      int format = meta.get().logFormat();
      boolean staging = format >= LogFormat.STAGED_MOVES;
      // A lease group's format follows the meta group's within a second or so; a Freeze that
      // bounds the state needs format 7 in the source, so the source is raised first.
      CompletableFuture<Void> sourceReady =
          p.getGroup() == 0
              ? CompletableFuture.completedFuture(null)
              : reached(p.getGroup()).raiseFormat(format);
      return sourceReady
          .thenCompose(ready -> source.apply(freeze(ns, move, staging ? MAX_MOVE_BYTES : 0)))
          .thenCompose(
              frozen -> {
                if (!frozen.hasFreezeNamespace()) {
                  return abandon(
                      p, source, destination, "group " + p.getGroup() + " answered " + frozen);
                }
                LogCommand whole = adopt(p, frozen.getFreezeNamespace(), destination.number());
                int bytes = whole.getSerializedSize();
                if (!staging && bytes > MAX_ADOPTION_BYTES) {
                  return abandon(
                      p,
                      source,
                      destination,
                      "its state is "
                          + bytes
                          + " bytes, above the "
                          + MAX_ADOPTION_BYTES
                          + " a move carries in one entry before log format "
                          + LogFormat.STAGED_MOVES);
                }
                return destination
                    .raiseFormat(format)
                    .thenCompose(
                        raised ->
                            !staging || bytes <= partBytes
                                ? destination.propose(whole)
                                : stageThenAdopt(destination, whole))
                    .thenCompose(
                        adopted -> {
                          if (adopted.hasInvalid()
                              && adopted.getInvalid().getField().equals(MISSING_PARTS)) {
                            // Another coordinator's stage of another move, or its adoption, took
                            // parts away meanwhile: this is no refusal of the move, and abandoning
                            // it could race an adoption that still applies. Stage them again.
                            throw new CompletionException(
                                new IllegalStateException(
                                    "group " + p.getMovingTo() + " answered " + adopted));
                          }
                          if (adopted.hasInvalid()) {
                            return abandon(
                                p,
                                source,
                                destination,
                                "group " + p.getMovingTo() + " answered " + adopted);
                          }
                          if (!adopted.hasAdoptNamespace()
                              || adopted.getAdoptNamespace().getEpoch() != p.getEpoch() + 1) {
                            throw new CompletionException(
                                new IllegalStateException(
                                    "group " + p.getMovingTo() + " answered " + adopted));
                          }
                          LOG.info(
                              "move {}: namespace {} adopted by group {} at epoch {} ({} leases,"
                                  + " {} bytes)",
                              move,
                              ns,
                              p.getMovingTo(),
                              p.getEpoch() + 1,
                              frozen.getFreezeNamespace().getState().getLeasesCount(),
                              bytes);
                          return finish(ns, move, MoveOutcome.MOVE_DONE)
                              .thenCompose(
                                  done -> {
                                    if (p.getGroup() == 0) {
                                      // The meta group forgot it in the same entry.
                                      LOG.info(
                                          "move {}: namespace {} left the meta group", move, ns);
                                      return CompletableFuture.completedFuture(null);
                                    }
                                    return drop(
                                        done.getNamespace(), move, p.getGroup(), done.getMove());
                                  });
                        });
              });
    }
    if (p.getDropFrom() != 0) {
      return drop(ns, move, p.getDropFrom(), move);
    }
    return CompletableFuture.completedFuture(null);
  }

  /**
   * Stages a state too large for one entry in the destination, part after part, then sends the
   * adoption that names the parts. Completes with the adoption's reply, or with the first stage's
   * that was not staged (an invalid one abandons the move: the adoption was not sent).
   */
  private CompletableFuture<LogReply> stageThenAdopt(GroupDoor destination, LogCommand whole) {
    AdoptNamespace adoption = whole.getAdoptNamespace();
    List<NamespaceState> parts = split(adoption.getState(), partBytes);
    CompletableFuture<LogReply> staging = CompletableFuture.completedFuture(null);
    for (int i = 0; i < parts.size(); i++) {
      LogCommand stage =
          LogCommand.newBuilder()
              .setStageNamespace(
                  StageNamespace.newBuilder()
                      .setNamespace(adoption.getNamespace())
                      .setMove(adoption.getMove())
                      .setPart(i)
                      .setPartBytes(partBytes)
                      .setState(parts.get(i)))
              .build();
      staging =
          staging.thenCompose(
              before ->
                  before == null || before.hasStageNamespace()
                      ? destination.propose(stage)
                      : CompletableFuture.completedFuture(before));
    }
    LogCommand staged =
        LogCommand.newBuilder()
            .setAdoptNamespace(
                adoption.toBuilder()
                    .clearState()
                    .setStagedParts(parts.size())
                    .setStagedPartBytes(partBytes)
                    .setStagedEntries(LeaseCore.stateEntries(adoption.getState())))
            .build();
    return staging.thenCompose(
        last -> {
          if (!last.hasStageNamespace()) {
            return CompletableFuture.completedFuture(last);
          }
          LOG.info(
              "move {}: namespace {} staged in group {} in {} parts",
              adoption.getMove(),
              adoption.getNamespace(),
              destination.number(),
              parts.size());
          return destination.propose(staged);
        });
  }

  /**
   * A namespace's state in parts of at most {@code partBytes} each (an entry above that size is a
   * part of its own), whose merge is the state: its leases, lock-delays, offers, sessions and
   * names' histories, each map's entries sorted by key and each entry whole in one part. The same
   * state and size always give the same parts, so parts staged by two coordinators of one move fit
   * together (docs/design/multi-raft.md, "Moving a namespace").
   */
  static List<NamespaceState> split(NamespaceState state, int partBytes) {
    List<NamespaceState> parts = new ArrayList<>();
    NamespaceState.Builder part = NamespaceState.newBuilder();
    long size = 0;
    List<NamespaceState> entries = new ArrayList<>();
    new TreeMap<>(state.getLeasesMap())
        .forEach((k, v) -> entries.add(NamespaceState.newBuilder().putLeases(k, v).build()));
    new TreeMap<>(state.getLockDelaysMap())
        .forEach((k, v) -> entries.add(NamespaceState.newBuilder().putLockDelays(k, v).build()));
    new TreeMap<>(state.getOffersMap())
        .forEach((k, v) -> entries.add(NamespaceState.newBuilder().putOffers(k, v).build()));
    new TreeMap<>(state.getSessionsMap())
        .forEach((k, v) -> entries.add(NamespaceState.newBuilder().putSessions(k, v).build()));
    new TreeMap<>(state.getHistoryMap())
        .forEach((k, v) -> entries.add(NamespaceState.newBuilder().putHistory(k, v).build()));
    for (NamespaceState entry : entries) {
      int bytes = entry.getSerializedSize();
      if (size > 0 && size + bytes > partBytes) {
        parts.add(part.build());
        part = NamespaceState.newBuilder();
        size = 0;
      }
      part.mergeFrom(entry);
      size += bytes;
    }
    if (size > 0 || parts.isEmpty()) {
      parts.add(part.build());
    }
    return parts;
  }

  /** The source drops the namespace, then the meta group forgets the move. */
  private CompletableFuture<Void> drop(String ns, long move, int from, long recorded) {
    if (recorded != move) {
      return CompletableFuture.completedFuture(null); // another driver finished it meanwhile
    }
    LogCommand drop =
        LogCommand.newBuilder()
            .setDropNamespace(DropNamespace.newBuilder().setNamespace(ns).setMove(move))
            .build();
    return reached(from)
        .propose(drop)
        .thenCompose(
            dropped -> {
              if (!dropped.hasDropNamespace()) {
                throw new CompletionException(
                    new IllegalStateException("group " + from + " answered " + dropped));
              }
              return finish(ns, move, MoveOutcome.MOVE_DROPPED);
            })
        .thenAccept(over -> LOG.info("move {}: namespace {} dropped by group {}", move, ns, from));
  }

  /**
   * Before the adoption was sent: the destination forgets what it staged (from log format 7; a
   * failure there leaves the parts until the namespace's next move to it), the source unfreezes,
   * and the meta group forgets the move.
   */
  private CompletableFuture<Void> abandon(
      PlacementResponse p,
      Function<LogCommand, CompletableFuture<LogReply>> source,
      GroupDoor destination,
      String why) {
    LOG.warn(
        "move {} of namespace {} to group {} abandoned: {}",
        p.getMove(),
        p.getNamespace(),
        p.getMovingTo(),
        why);
    CompletableFuture<?> discarded =
        destination.logFormat() >= LogFormat.STAGED_MOVES
            ? destination
                .propose(
                    LogCommand.newBuilder()
                        .setStageNamespace(
                            StageNamespace.newBuilder()
                                .setNamespace(p.getNamespace())
                                .setMove(p.getMove())
                                .setDiscard(true))
                        .build())
                .handle((reply, error) -> null)
            : CompletableFuture.completedFuture(null);
    LogCommand unfreeze =
        LogCommand.newBuilder()
            .setUnfreezeNamespace(
                UnfreezeNamespace.newBuilder().setNamespace(p.getNamespace()).setMove(p.getMove()))
            .build();
    return discarded
        .thenCompose(d -> source.apply(unfreeze))
        .thenCompose(
            unfrozen -> {
              if (!unfrozen.hasUnfreezeNamespace()) {
                throw new CompletionException(
                    new IllegalStateException(
                        "group " + p.getGroup() + " answered " + unfrozen + " to an unfreeze"));
              }
              return finish(p.getNamespace(), p.getMove(), MoveOutcome.MOVE_ABORTED);
            })
        .thenAccept(over -> {});
  }

  private CompletableFuture<PlacementResponse> finish(String ns, long move, MoveOutcome outcome) {
    LogCommand finish =
        LogCommand.newBuilder()
            .setFinishMove(
                FinishMove.newBuilder().setNamespace(ns).setMove(move).setOutcome(outcome))
            .build();
    return proposeToMeta
        .apply(finish)
        .thenApply(
            reply -> {
              if (!reply.hasFinishMove()) {
                throw new CompletionException(
                    new IllegalStateException("the meta group answered " + reply));
              }
              return reply.getFinishMove();
            });
  }

  private static LogCommand freeze(String ns, long move, long maxStateBytes) {
    return LogCommand.newBuilder()
        .setFreezeNamespace(
            FreezeNamespace.newBuilder()
                .setNamespace(ns)
                .setMove(move)
                .setMaxStateBytes(maxStateBytes))
        .build();
  }

  private static LogCommand adopt(PlacementResponse p, FreezeNamespaceResponse frozen, int group) {
    return LogCommand.newBuilder()
        .setAdoptNamespace(
            AdoptNamespace.newBuilder()
                .setNamespace(p.getNamespace())
                .setEpoch(p.getEpoch() + 1)
                .setGroup(group)
                .setFloor(frozen.getFloor())
                .setMove(p.getMove())
                .setState(frozen.getState())
                .setFromGroup(p.getGroup())
                .setFrozenAt(frozen.getRevision()))
        .build();
  }

  /** Where a move's source proposes: the meta group (0) or a lease group this node reaches. */
  private Function<LogCommand, CompletableFuture<LogReply>> proposer(int group) {
    return group == 0 ? proposeToMeta : reached(group)::propose;
  }

  private GroupDoor reached(int number) {
    return groups
        .door(number)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "lease group "
                        + number
                        + " is not reachable from this node: it cannot drive moves"));
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
