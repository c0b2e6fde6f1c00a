package io.leasehold.server.raft;

import io.leasehold.proto.v1.CopyGlobal;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.core.LogFormat;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings the meta group's global state (policies, bans, roles) to every lease group
 * (docs/design/multi-raft.md, "Global state"), as {@code CopyGlobal} entries: each the whole state
 * at a version, which a group applies only if it is newer than the one it holds.
 *
 * <p>A global change answered by the meta group is answered to the caller only once every lease
 * group holds it ({@link #after}): a caller told "banned" can rely on no group granting that holder
 * anything after the reply. If a group cannot take it within the call's deadline, the call fails
 * naming the group; the change stays committed in the meta group, and the group's leader copies it
 * once the group can take it: every {@link #SWEEP} each lease group's leader compares the global
 * state its group holds with the meta group's as its node applied it, and copies a newer one. That
 * also carries the changes nobody waits for (the meta leader's lifting of timed bans, the initial
 * admin).
 */
final class GlobalSync implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GlobalSync.class);

  /** How often each lease group's leader looks for a newer global state. */
  static final Duration SWEEP = Duration.ofSeconds(1);

  private final Supplier<LeaseCore> meta;
  private final Supplier<CompletableFuture<?>> metaCaughtUp;
  private final LeaseGroups groups;
  private final ScheduledExecutorService timer;

  /** What else each sweep does on this node's lease groups (ending ended sessions' parts). */
  private final Runnable alsoEverySweep;

  /** The groups the sweep has a copy in flight to: one at a time each. */
  private final Set<Integer> sweeping = ConcurrentHashMap.newKeySet();

  GlobalSync(
      Supplier<LeaseCore> meta,
      Supplier<CompletableFuture<?>> metaCaughtUp,
      LeaseGroups groups,
      Runnable alsoEverySweep) {
    this.meta = meta;
    this.metaCaughtUp = metaCaughtUp;
    this.groups = groups;
    this.alsoEverySweep = alsoEverySweep;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "leasehold-global-sync");
              t.setDaemon(true);
              return t;
            });
  }

  /** Starts the sweep of the lease groups this node leads; a node that hosts none has none. */
  void start() {
    if (groups.size() > 0) {
      // Groups on subsets of the nodes: learn where the others are and who leads them now, so that
      // the first writes place namespaces on every group, not only on those this node hosts.
      timer.scheduleWithFixedDelay(
          groups::learnLeaders, 0, SWEEP.toMillis(), TimeUnit.MILLISECONDS);
    }
    // Where lease groups sit on subsets of the nodes, a node may become a member of a group later.
    if (!groups.hostedNumbers().isEmpty() || groups.size() > 0) {
      timer.scheduleWithFixedDelay(
          this::sweep, SWEEP.toMillis(), SWEEP.toMillis(), TimeUnit.MILLISECONDS);
      timer.scheduleWithFixedDelay(
          () -> {
            try {
              alsoEverySweep.run();
            } catch (RuntimeException e) {
              LOG.warn("sweeping the lease groups: {}", e.toString());
            }
          },
          SWEEP.toMillis(),
          SWEEP.toMillis(),
          TimeUnit.MILLISECONDS);
    }
  }

  /**
   * The meta group's reply to a global change, once every lease group holds the change too; a
   * refused or invalid change is answered as it is.
   */
  CompletableFuture<LogReply> after(CompletableFuture<LogReply> metaReply) {
    return metaReply.thenCompose(
        reply -> {
          if (reply.hasInvalid()
              || reply.hasRefused()
              || meta.get().logFormat() < LogFormat.GROUPS) {
            return CompletableFuture.completedFuture(reply);
          }
          // Once caught up, this node's meta state holds the change (and maybe later ones).
          return metaCaughtUp
              .get()
              .thenCompose(caughtUp -> copyEverywhere(meta.get().globalState()))
              .thenApply(copied -> reply);
        });
  }

  private CompletableFuture<Void> copyEverywhere(CopyGlobal state) {
    List<CompletableFuture<Void>> copies =
        groups.all().stream().map(n -> copyTo(n, state)).toList();
    return CompletableFuture.allOf(copies.toArray(CompletableFuture[]::new));
  }

  /** Has lease group {@code number} hold {@code state} or a newer copy. */
  private CompletableFuture<Void> copyTo(int number, CopyGlobal state) {
    Optional<GroupDoor> g = groups.door(number);
    if (g.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    GroupDoor group = g.get();
    if (group.localCore().map(c -> c.globalVersion() >= state.getVersion()).orElse(false)) {
      return CompletableFuture.completedFuture(null); // applied here, so committed in the group
    }
    LogCommand copy = LogCommand.newBuilder().setCopyGlobal(state).build();
    return group
        .raiseFormat(meta.get().logFormat())
        .thenCompose(raised -> group.propose(copy))
        .handle(
            (reply, error) -> {
              if (error == null
                  && reply.hasCopyGlobal()
                  && reply.getCopyGlobal().getVersion() >= state.getVersion()) {
                return null;
              }
              throw new CompletionException(
                  new ConsensusUnavailableException(
                      "the change is committed in the meta group, but lease group "
                          + number
                          + " has not taken it yet ("
                          + (error != null ? RaftErrors.unwrap(error).getMessage() : reply)
                          + "); the group's leader copies it there once the group has one",
                      error == null ? null : RaftErrors.unwrap(error)));
            });
  }

  /**
   * On each lease group's leader: a copy of the meta group's state, as this node applied it, if the
   * group holds an older one. A node whose meta state lags sends nothing older than the group holds
   * (the group would ignore it), so any leader may copy, including one the meta group's leader does
   * not share a group with.
   */
  private void sweep() {
    try {
      LeaseCore core = meta.get();
      if (core.logFormat() < LogFormat.GROUPS) {
        return;
      }
      long version = core.globalVersion();
      CopyGlobal state = null; // read from the store once a sweep, if some group needs it
      for (int number : groups.hostedNumbers()) {
        Optional<LeaseGroup> g = groups.hosted(number);
        if (g.isEmpty()
            || !g.get().isLeader()
            || g.get().machine().core().globalVersion() >= version
            || !sweeping.add(number)) {
          continue;
        }
        if (state == null) {
          state = core.globalState();
        }
        copyTo(number, state)
            .whenComplete(
                (ok, error) -> {
                  sweeping.remove(number);
                  if (error != null) {
                    LOG.debug("lease group {}: global state not copied yet: {}", number, error);
                  }
                });
      }
    } catch (RuntimeException e) {
      LOG.warn("copying the global state to lease groups: {}", e.toString());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
