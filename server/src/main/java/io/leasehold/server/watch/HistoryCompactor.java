package io.leasehold.server.watch;

import io.leasehold.proto.v1.CompactHistory;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.statemachine.core.LeaseCore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the event history within its bounds (count and age) in the background. Only the leader
 * decides, from its own copy of the history, and proposes CompactHistory through the log, so every
 * replica drops the same events and serves the same history.
 */
public final class HistoryCompactor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HistoryCompactor.class);

  private final Supplier<LeaseCore> core;
  private final Function<LogCommand, CompletableFuture<LogReply>> proposeHere;
  private final BooleanSupplier isLeader;
  private final LongSupplier wallClockMicros;
  private final long maxEvents;
  private final Duration maxAge;
  private final AtomicBoolean inFlight = new AtomicBoolean();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "leasehold-history-compactor");
            t.setDaemon(true);
            return t;
          });

  public HistoryCompactor(
      Supplier<LeaseCore> core,
      Function<LogCommand, CompletableFuture<LogReply>> proposeHere,
      BooleanSupplier isLeader,
      LongSupplier wallClockMicros,
      long maxEvents,
      Duration maxAge,
      Duration period) {
    this.core = core;
    this.proposeHere = proposeHere;
    this.isLeader = isLeader;
    this.wallClockMicros = wallClockMicros;
    this.maxEvents = maxEvents;
    this.maxAge = maxAge;
    timer.scheduleWithFixedDelay(
        this::compactIfNeeded, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
  }

  void compactIfNeeded() {
    try {
      if (!isLeader.getAsBoolean() || inFlight.get()) {
        return;
      }
      LeaseCore c = core.get();
      long current = c.history().getCompactRevision();
      long point =
          c.compactionPoint(maxEvents, wallClockMicros.getAsLong() - maxAge.toNanos() / 1_000);
      if (point <= current) {
        return;
      }
      inFlight.set(true);
      proposeHere
          .apply(
              LogCommand.newBuilder()
                  .setCompactHistory(CompactHistory.newBuilder().setBelowRevision(point))
                  .build())
          .whenComplete(
              (reply, error) -> {
                inFlight.set(false);
                if (error == null && reply.hasCompactHistory()) {
                  LOG.debug(
                      "history compacted below revision {} ({} events removed)",
                      reply.getCompactHistory().getCompactRevision(),
                      reply.getCompactHistory().getRemoved());
                }
              });
    } catch (RuntimeException e) {
      inFlight.set(false);
      LOG.warn("history compaction check failed", e);
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
