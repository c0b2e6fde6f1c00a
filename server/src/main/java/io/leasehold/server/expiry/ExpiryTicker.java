package io.leasehold.server.expiry;

import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineQueryItem;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.proto.v1.ExpireCommand;
import io.leasehold.proto.v1.ExpireItem;
import io.leasehold.proto.v1.ExpireSessionItem;
import io.leasehold.proto.v1.LiftBanItem;
import io.leasehold.proto.v1.LiftBans;
import io.leasehold.proto.v1.LiftLockDelayItem;
import io.leasehold.proto.v1.LiftLockDelays;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.WithdrawOfferItem;
import io.leasehold.proto.v1.WithdrawOffers;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.LeaseEvent;
import io.leasehold.statemachine.core.SessionChange;
import io.leasehold.statemachine.core.TimedBar;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link ExpiryScheduler} while this node leads: promotes it when Ratis says the leader is
 * ready, demotes it when leadership goes, and proposes the due leases as batched Expire commands
 * through this node's Raft server. In the same turn it proposes the lifting of the lock-delays and
 * timed bans the scheduler found due on the same monotonic clock (LiftLockDelays, LiftBans, each
 * guarded by the revision that set the bar), and the withdrawal of transfer offers nobody accepted
 * in time (WithdrawOffers, guarded by the offer's revision). Everything runs on its own thread:
 * Ratis callbacks only enqueue work and return.
 */
public final class ExpiryTicker implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExpiryTicker.class);
  static final int MAX_BATCH = 1000;

  private final Duration tickInterval;
  private final LongSupplier monotonicNanos;
  private final ExpiryScheduler scheduler;
  private final ScheduledExecutorService executor =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "leasehold-expiry");
            t.setDaemon(true);
            return t;
          });

  /**
   * Bumped by every promote/demote: a queued promotion that was overtaken by a demotion does
   * nothing.
   */
  private final AtomicLong generation = new AtomicLong();

  private volatile LeaseStateMachine stateMachine;
  private volatile Function<LogCommand, CompletableFuture<LogReply>> propose;
  private volatile BooleanSupplier isLeader;
  private volatile LongSupplier commitIndex;

  /** Ratis said "leader ready" and nothing said otherwise since; survives until {@link #bind}. */
  private volatile boolean leaderReady;

  /** The term of the latest promotion, for reads that say a leader change extended a lease. */
  private volatile long promotedTerm;

  /** Dates extensions for people who read them; never decides anything. */
  private final LongSupplier wallClockMicros;

  private ScheduledFuture<?> ticking;

  /** How far the clock was moved on purpose (always 0 for a clock no test moves). */
  private final LongSupplier skippedNanos;

  /** The skips the scheduler was told of (ticker thread only). */
  private long skipsApplied;

  /** Completed once a turn that starts after they were added has had its proposals answered. */
  private final List<CompletableFuture<Void>> turnWaiters = new ArrayList<>();

  /** Expiry and lifts use only {@code monotonicNanos}: no wall clock decides anything. */
  public ExpiryTicker(Duration tickInterval, Duration stallThreshold, LongSupplier monotonicNanos) {
    this(tickInterval, stallThreshold, monotonicNanos, () -> System.currentTimeMillis() * 1_000);
  }

  /**
   * @param wallClockMicros only dates the extensions a read shows ({@link #deadlines})
   */
  public ExpiryTicker(
      Duration tickInterval,
      Duration stallThreshold,
      LongSupplier monotonicNanos,
      LongSupplier wallClockMicros) {
    this(tickInterval, stallThreshold, monotonicNanos, () -> 0, wallClockMicros);
  }

  /** Deciding by {@code clock}, which a test may move forward ({@link ExpiryClock#advance}). */
  public ExpiryTicker(Duration tickInterval, Duration stallThreshold, ExpiryClock clock) {
    this(
        tickInterval,
        stallThreshold,
        clock::nanos,
        clock::skippedNanos,
        () -> System.currentTimeMillis() * 1_000);
  }

  private ExpiryTicker(
      Duration tickInterval,
      Duration stallThreshold,
      LongSupplier monotonicNanos,
      LongSupplier skippedNanos,
      LongSupplier wallClockMicros) {
    this.tickInterval = tickInterval;
    this.monotonicNanos = monotonicNanos;
    this.skippedNanos = skippedNanos;
    this.wallClockMicros = wallClockMicros;
    this.scheduler = new ExpiryScheduler(tickInterval.toNanos(), stallThreshold.toNanos());
  }

  /**
   * Connects the ticker to the node once its Raft server runs. Leadership news that came during
   * start-up (a single node elects itself at once) takes effect here.
   *
   * @param propose proposes to this node's Raft server only, never forwarding to another leader
   */
  public void bind(
      LeaseStateMachine stateMachine,
      Function<LogCommand, CompletableFuture<LogReply>> propose,
      BooleanSupplier isLeader,
      LongSupplier commitIndex) {
    this.stateMachine = stateMachine;
    this.propose = propose;
    this.isLeader = isLeader;
    this.commitIndex = commitIndex;
    if (leaderReady) {
      promote();
    }
  }

  /**
   * From the apply thread: keep deadlines in step with grants, renewals and endings, and lifts with
   * bars.
   */
  public void onApplied(ApplyResult result) {
    arrived(result);
    if ((result.events().isEmpty() && result.bars().isEmpty() && result.sessions().isEmpty())
        || !scheduler.isActive()) {
      return;
    }
    long now = monotonicNanos.getAsLong();
    for (LeaseEvent e : result.events()) {
      scheduler.onEvent(e, now);
    }
    for (SessionChange c : result.sessions()) {
      scheduler.onSession(c, now);
    }
    for (TimedBar b : result.bars()) {
      scheduler.onBar(b, now);
    }
  }

  /**
   * A namespace's leases that became live in this entry without events: adopted from a move's
   * source, or unfrozen where a move was abandoned. They start from a full TTL now, as the leases a
   * new leader finds do.
   */
  private void arrived(ApplyResult result) {
    LogReply reply = result.reply();
    if (reply.hasFreezeNamespace() || reply.hasDropNamespace()) {
      // Frozen or dropped here: their expiry is decided where the move takes them.
      scheduler.forgetNamespace(
          reply.hasFreezeNamespace()
              ? reply.getFreezeNamespace().getNamespace()
              : reply.getDropNamespace().getNamespace());
      return;
    }
    String namespace;
    if (reply.hasAdoptNamespace()
        && reply.getAdoptNamespace().getEpoch() > 1
        && reply.getAdoptNamespace().getRevision() == result.revision()) {
      namespace = reply.getAdoptNamespace().getNamespace();
    } else if (reply.hasUnfreezeNamespace()) {
      namespace = reply.getUnfreezeNamespace().getNamespace();
    } else {
      return;
    }
    LeaseStateMachine sm = stateMachine;
    if (sm == null || !scheduler.isActive()) {
      return;
    }
    long now = monotonicNanos.getAsLong();
    String prefix = namespace + "/";
    sm.core()
        .forEachLease(
            (name, lease) -> {
              if (name.startsWith(prefix)) {
                scheduler.track(name, lease, now);
              }
            });
  }

  /** Ratis says this node leads and has applied its term's first entry. */
  public void promote() {
    promote(0);
  }

  /** As {@link #promote()}, in {@code term} (which reads of extended leases name). */
  public void promote(long term) {
    promotedTerm = term;
    leaderReady = true;
    long gen = generation.incrementAndGet();
    submit(() -> promoteNow(gen));
  }

  /** Ratis says this node does not lead (any more). Stops deciding at once. */
  public void demote() {
    leaderReady = false;
    generation.incrementAndGet();
    scheduler.demote();
    submit(this::stopTicking);
  }

  /**
   * Ratis still reports leadership changes while the node shuts down; by then there is nothing to
   * do.
   */
  private void submit(Runnable task) {
    try {
      executor.execute(task);
    } catch (RejectedExecutionException closed) {
      LOG.debug("expiry ticker closed; ignoring leadership change");
    }
  }

  private void promoteNow(long gen) {
    LeaseStateMachine sm = stateMachine;
    if (gen != generation.get() || sm == null) {
      return;
    }
    // Leases renewed at or below this index were renewed before this leader took over: reads
    // say their deadline comes from the leader change.
    long appliedBefore =
        sm.getLastAppliedTermIndex() == null ? -1 : sm.getLastAppliedTermIndex().getIndex();
    long now = monotonicNanos.getAsLong();
    scheduler.promote(now, appliedBefore, promotedTerm);
    // Leases found in the state start from a full TTL now: a renewal may have reached the
    // old leader just before it died, and this leader cannot know.
    long revision = sm.core().forEachLease((name, lease) -> scheduler.track(name, lease, now));
    sm.core().forEachSession((id, session) -> scheduler.trackSession(id, session, now));
    // Likewise every lock-delay gets its full delay from now, and a timed ban what remains of it
    // by stamped time: the old leader's timers died with it.
    sm.core().forEachTimedBar(bar -> scheduler.trackBar(bar, now));
    scheduler.promoted();
    if (gen != generation.get()) {
      scheduler.demote();
      return;
    }
    stopTicking();
    long period = tickInterval.toNanos();
    ticking = executor.scheduleAtFixedRate(this::tick, period, period, TimeUnit.NANOSECONDS);
    LOG.info(
        "expiry ticker promoted: tracking {} leases, {} sessions and {} lock-delays and timed bans as of revision {}",
        scheduler.tracked(),
        scheduler.trackedSessions(),
        scheduler.trackedBars(),
        revision);
  }

  private void stopTicking() {
    if (ticking != null) {
      ticking.cancel(false);
      ticking = null;
      LOG.info("expiry ticker demoted");
    }
  }

  private void tick() {
    List<CompletableFuture<Void>> waiters = List.of();
    try {
      if (!isLeader.getAsBoolean()) {
        demote();
        return;
      }
      synchronized (turnWaiters) {
        waiters = List.copyOf(turnWaiters);
        turnWaiters.clear();
      }
      List<CompletableFuture<?>> proposed = new ArrayList<>();
      long applied = stateMachine.getLastAppliedTermIndex().getIndex();
      long commit = commitIndex.getAsLong();
      // Now before the skips: a move in between is then told to the scheduler before the time
      // that holds it, which makes a negative gap, never a stall taken for one.
      long now = monotonicNanos.getAsLong();
      long skipped = skippedNanos.getAsLong();
      if (skipped != skipsApplied) {
        scheduler.skip(skipped - skipsApplied);
        skipsApplied = skipped;
      }
      List<ExpireItem> due;
      do {
        due = scheduler.tick(now, applied, commit, MAX_BATCH);
        now = monotonicNanos.getAsLong();
        if (!due.isEmpty()) {
          proposeInTurn(
              LogCommand.newBuilder()
                  .setExpire(ExpireCommand.newBuilder().addAllItems(due))
                  .build(),
              "expire",
              proposed,
              reply -> {
                if (reply.getExpire().getExpired() > 0) {
                  LOG.info(
                      "expired {} leases at revision {}",
                      reply.getExpire().getExpired(),
                      reply.getExpire().getRevision());
                }
              });
        }
      } while (due.size() == MAX_BATCH);
      expireSessions(proposed);
      liftDue(proposed);
      if (!waiters.isEmpty()) {
        List<CompletableFuture<Void>> done = waiters;
        CompletableFuture.allOf(proposed.toArray(CompletableFuture[]::new))
            .whenComplete((ok, error) -> done.forEach(w -> w.complete(null)));
      }
    } catch (RuntimeException e) {
      // Never let one bad turn kill the schedule.
      LOG.warn("expiry tick failed", e);
      waiters.forEach(w -> w.completeExceptionally(e));
    }
  }

  /**
   * Proposes the expiry of the sessions that are due, each guarded by its last keep-alive's
   * revision.
   */
  private void expireSessions(List<CompletableFuture<?>> proposed) {
    List<ExpireSessionItem> due;
    do {
      due = scheduler.dueSessions(monotonicNanos.getAsLong(), MAX_BATCH);
      if (!due.isEmpty()) {
        proposeInTurn(
            LogCommand.newBuilder()
                .setExpire(ExpireCommand.newBuilder().addAllSessions(due))
                .build(),
            "session expire",
            proposed,
            reply -> {
              if (reply.getExpire().getSessionsExpired() > 0) {
                LOG.info(
                    "expired {} sessions ({} leases with them) at revision {}",
                    reply.getExpire().getSessionsExpired(),
                    reply.getExpire().getSessionLeasesEnded(),
                    reply.getExpire().getRevision());
              }
            });
      }
    } while (due.size() == MAX_BATCH);
  }

  /**
   * Proposes the lifting of the lock-delays and timed bans that are due, like an Expire: guarded by
   * the revision that set each.
   */
  private void liftDue(List<CompletableFuture<?>> proposed) {
    List<TimedBar> due;
    do {
      due = scheduler.dueLifts(monotonicNanos.getAsLong(), MAX_BATCH);
      List<LiftLockDelayItem> delays = new ArrayList<>();
      List<LiftBanItem> bans = new ArrayList<>();
      List<WithdrawOfferItem> offers = new ArrayList<>();
      for (TimedBar b : due) {
        switch (b.kind()) {
          case LOCK_DELAY ->
              delays.add(
                  LiftLockDelayItem.newBuilder()
                      .setName(b.key())
                      .setRevision(b.revision())
                      .build());
          case BAN ->
              bans.add(
                  LiftBanItem.newBuilder().setHolder(b.key()).setRevision(b.revision()).build());
          case OFFER ->
              offers.add(
                  WithdrawOfferItem.newBuilder()
                      .setName(b.key())
                      .setRevision(b.revision())
                      .build());
        }
      }
      if (!offers.isEmpty()) {
        proposeInTurn(
            LogCommand.newBuilder()
                .setWithdrawOffers(WithdrawOffers.newBuilder().addAllItems(offers))
                .build(),
            "withdraw-offers",
            proposed,
            reply -> {
              if (reply.getWithdrawOffers().getWithdrawn() > 0) {
                LOG.info(
                    "withdrew {} transfer offers at revision {}",
                    reply.getWithdrawOffers().getWithdrawn(),
                    reply.getWithdrawOffers().getRevision());
              }
            });
      }
      if (!delays.isEmpty()) {
        proposeInTurn(
            LogCommand.newBuilder()
                .setLiftLockDelays(LiftLockDelays.newBuilder().addAllItems(delays))
                .build(),
            "lift-lock-delays",
            proposed,
            reply -> {
              if (reply.getLiftLockDelays().getLifted() > 0) {
                LOG.debug(
                    "lifted {} lock-delays at revision {}",
                    reply.getLiftLockDelays().getLifted(),
                    reply.getLiftLockDelays().getRevision());
              }
            });
      }
      if (!bans.isEmpty()) {
        proposeInTurn(
            LogCommand.newBuilder().setLiftBans(LiftBans.newBuilder().addAllItems(bans)).build(),
            "lift-bans",
            proposed,
            reply -> {
              if (reply.getLiftBans().getLifted() > 0) {
                LOG.info(
                    "lifted {} timed bans at revision {}",
                    reply.getLiftBans().getLifted(),
                    reply.getLiftBans().getRevision());
              }
            });
      }
    } while (due.size() == MAX_BATCH);
  }

  /**
   * Proposes {@code command} through this node's Raft server as part of the current turn (its
   * answer counts for {@link #nextTurn}); {@code applied} reports what it did, and a proposal not
   * applied here (leadership lost meanwhile) is noted at debug level as {@code what}.
   */
  private void proposeInTurn(
      LogCommand command,
      String what,
      List<CompletableFuture<?>> proposed,
      Consumer<LogReply> applied) {
    proposed.add(
        propose
            .apply(command)
            .whenComplete(
                (reply, error) -> {
                  if (error != null) {
                    LOG.debug("{} proposal not applied here: {}", what, error.toString());
                  } else {
                    applied.accept(reply);
                  }
                }));
  }

  /**
   * Completes once a turn of this ticker that starts after the call has run and every proposal it
   * made (expiries, session expiries, lifts) was answered: after {@link ExpiryClock#advance}, what
   * came due is then applied on this node. Never completes on a node that does not lead.
   */
  public CompletableFuture<Void> nextTurn() {
    CompletableFuture<Void> f = new CompletableFuture<>();
    synchronized (turnWaiters) {
      turnWaiters.add(f);
    }
    return f;
  }

  public ExpiryScheduler scheduler() {
    return scheduler;
  }

  /**
   * The deadlines this node keeps as the deciding leader, for the node that serves a lease read
   * (this one or a follower): one per query item, in order. Fails unless this node leads and its
   * ticker runs: the asker then shows its estimate.
   */
  public DeadlineReply deadlines(DeadlineQuery query) {
    BooleanSupplier leads = isLeader;
    if (leads == null || !leads.getAsBoolean() || !scheduler.isActive()) {
      throw new IllegalStateException("this node does not decide expiry now");
    }
    long now = monotonicNanos.getAsLong();
    long wall = wallClockMicros.getAsLong();
    DeadlineReply.Builder reply = DeadlineReply.newBuilder();
    for (DeadlineQueryItem item : query.getItemsList()) {
      reply.addItems(scheduler.deadline(item, now, wall));
    }
    return reply.build();
  }

  @Override
  public void close() {
    generation.incrementAndGet();
    scheduler.demote();
    executor.shutdownNow();
  }
}
