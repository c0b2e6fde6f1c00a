package io.leasehold.server.raft;

import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.SetLogFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * What makes a read linearizable: a log entry proposed after the read arrived, committed, and
 * applied on this node before the read is answered.
 *
 * <p>Why an entry. If an entry proposed after the read arrived commits, a majority accepted it in
 * its leader's term after that moment, so no leader of a later term had committed anything before
 * it (a majority would already have refused that term); and every entry committed before the read
 * arrived sits below it in every log. So once this node has applied the barrier, its state holds
 * every write acknowledged before the read arrived. Nothing rests on a leader's idea that it still
 * leads, nor on clocks. Ratis's read index would be cheaper, but Ratis 3.3 answers it without
 * asking anyone when nothing has committed since its last confirmed read (and lets a read join a
 * round that began before it arrived): a leader cut off from the others then served its old state
 * while the majority had moved on (IsolatedLeaderReadTest).
 *
 * <p>Reads share barriers: those that arrive while one is in flight wait for the next, which goes
 * out as soon as the one in flight is answered, so a node has at most one barrier in flight however
 * many reads it serves. The barrier is a {@code SetLogFormat} asking for no change, which every
 * version of the state machine applies alike and which changes nothing.
 */
final class ReadBarrier implements AutoCloseable {
  /** The command of a barrier: format 0 never raises the format, so applying it changes nothing. */
  static final LogCommand BARRIER =
      LogCommand.newBuilder().setSetLogFormat(SetLogFormat.newBuilder().setFormat(0)).build();

  private final Function<LogCommand, CompletableFuture<LogReply>> propose;
  private final LongSupplier appliedIndex;
  private final LongConsumer behind;
  private final Duration timeout;

  private record Waiter(long index, CompletableFuture<Long> done) {}

  /** Reads waiting for this node to apply their barrier, lowest index first. Guarded by itself. */
  private final PriorityQueue<Waiter> waiting =
      new PriorityQueue<>(Comparator.comparingLong(Waiter::index));

  private volatile boolean anyWaiting;
  private final ScheduledThreadPoolExecutor timer =
      new ScheduledThreadPoolExecutor(
          1,
          r -> {
            Thread t = new Thread(r, "leasehold-read-barrier-timeout");
            t.setDaemon(true);
            return t;
          });
  // Guarded by this.
  private boolean inFlight;
  private CompletableFuture<Long> next;

  /**
   * @param propose replicates a command through whichever node leads and returns its reply
   * @param appliedIndex the last log index this node has applied
   * @param behind told of a committed barrier this node has not applied yet
   * @param timeout how long a read waits for this node to apply its barrier
   */
  ReadBarrier(
      Function<LogCommand, CompletableFuture<LogReply>> propose,
      LongSupplier appliedIndex,
      LongConsumer behind,
      Duration timeout) {
    this.propose = propose;
    this.appliedIndex = appliedIndex;
    this.behind = behind;
    this.timeout = timeout;
    timer.setRemoveOnCancelPolicy(true); // nearly every timeout is cancelled within milliseconds
  }

  /**
   * Completes, with the barrier's index, once a barrier proposed after this call has committed and
   * this node has applied it; fails as the barrier's proposal fails.
   */
  CompletableFuture<Long> await() {
    CompletableFuture<Long> committed;
    boolean send;
    synchronized (this) {
      if (!inFlight) {
        inFlight = true;
        send = true;
        committed = new CompletableFuture<>();
      } else {
        if (next == null) {
          next = new CompletableFuture<>();
        }
        committed = next;
        send = false;
      }
    }
    if (send) {
      send(committed);
    }
    return committed.thenCompose(this::applied);
  }

  private void send(CompletableFuture<Long> committed) {
    CompletableFuture<LogReply> reply;
    try {
      reply = propose.apply(BARRIER);
    } catch (RuntimeException e) {
      reply = CompletableFuture.failedFuture(e);
    }
    reply.whenComplete(
        (r, error) -> {
          CompletableFuture<Long> following;
          synchronized (this) {
            following = next;
            next = null;
            inFlight = following != null;
          }
          if (following != null) {
            send(following); // every read waiting for it arrived while this barrier was in flight
          }
          if (error != null) {
            committed.completeExceptionally(error);
          } else if (!r.hasSetLogFormat() || r.getSetLogFormat().getRevision() <= 0) {
            // Never read without the barrier's index: that would answer from whatever is applied.
            committed.completeExceptionally(
                new IllegalStateException(
                    "the read barrier was answered without its log index: " + r));
          } else {
            committed.complete(r.getSetLogFormat().getRevision());
          }
        });
  }

  /** Completes once this node has applied {@code index}, or fails after the timeout. */
  private CompletableFuture<Long> applied(long index) {
    if (appliedIndex.getAsLong() >= index) {
      return CompletableFuture.completedFuture(index);
    }
    Waiter w = new Waiter(index, new CompletableFuture<>());
    synchronized (waiting) {
      waiting.add(w);
      anyWaiting = true;
    }
    // The apply thread sets the applied index before it looks for waiters, and this thread
    // registers before it reads the index: one of the two sees the other.
    advanced(appliedIndex.getAsLong());
    if (!w.done().isDone()) {
      behind.accept(index);
      ScheduledFuture<?> expiry =
          timer.schedule(
              () -> {
                synchronized (waiting) {
                  waiting.remove(w);
                }
                w.done()
                    .completeExceptionally(
                        new TimeoutException(
                            "this node had not applied the read's barrier (log index "
                                + index
                                + ") after "
                                + timeout.toMillis()
                                + " ms: it is behind the leader"));
              },
              timeout.toMillis(),
              TimeUnit.MILLISECONDS);
      w.done().whenComplete((i, e) -> expiry.cancel(false));
    }
    return w.done();
  }

  /** This node has applied up to {@code index}: reads whose barrier is at or below it go ahead. */
  void advanced(long index) {
    if (!anyWaiting) {
      return;
    }
    List<Waiter> ready = new ArrayList<>();
    synchronized (waiting) {
      while (!waiting.isEmpty() && waiting.peek().index() <= index) {
        ready.add(waiting.poll());
      }
      anyWaiting = !waiting.isEmpty();
    }
    ready.forEach(w -> w.done().complete(w.index()));
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
