package io.leasehold.server.api;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.LeaseEvent;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * Acquire calls that wait for a held name ({@code AcquireRequest.wait}), queued on the node that
 * received them, first come first served for each name.
 *
 * <p>Without it every waiter watches the name and asks again when its lease ends; all of them ask
 * at once and a random one wins, so under contention a few waiters lose many times in a row (a
 * lock's wait p99 several times its mean). Here only the head of a name's queue has an attempt out;
 * it asks again once this node applies the end of the lease its conflict named (or of the one last
 * granted from the queue), or once the lock-delay that refused it is over. A waiting call that
 * arrives while the name has a queue joins the tail without asking. Calls without a wait are not
 * queued and may still win a free name first.
 *
 * <p>The queue is not replicated: a waiter is a live call, and a call lasts only as long as its
 * connection to this node. Calls queued on different nodes ask independently (the SDK sends its
 * writes to the leader, so its waiters share one queue). Each attempt after the first carries an id
 * of its own: the core remembers the answer to a request id, so asking again under the caller's id
 * would only repeat the first CONFLICT. For the same reason a first answer that the core remembered
 * from before this call (the caller retried an id it had used) is not waited on but asked again at
 * once. A grant that arrives after its call went away stays its holder's (see {@link #attempted}).
 */
public final class AcquireWaits implements AutoCloseable {

  /**
   * The calls one node keeps waiting; beyond them a waiting call gets one attempt, as without a
   * wait.
   */
  static final int MAX_WAITING = 10_000;

  private static final long MIN_LOCK_DELAY_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  private static final long MAX_LOCK_DELAY_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(1);

  /**
   * How long a head waits for the end of the lease it conflicted with before it asks again
   * regardless.
   */
  private static final long RECHECK_NANOS = TimeUnit.SECONDS.toNanos(5);

  /**
   * How long a head waits before it asks again where this node does not apply the name's entries
   * (lease groups on subsets of the nodes, a group this node is not a member of): no end reaches it
   * as an event, so it asks at this pace instead.
   */
  static final long UNHEARD_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /** Whether this node applies a name's entries, and so hears its lease end. */
  private final java.util.function.Predicate<String> heardHere;

  private final Function<LogCommand, CompletableFuture<LogReply>> propose;
  private final ScheduledExecutorService executor;
  private final long recheckNanos;
  private final String idPrefix;
  private final AtomicLong ids = new AtomicLong();
  private volatile long applied;

  /** Whether any name has a queue: most applied entries then need no lock. */
  private volatile boolean anyQueue;

  // Guarded by this.
  private final Map<String, NameQueue> queues = new HashMap<>();
  private int waiting;
  private boolean closed;

  public AcquireWaits(Function<LogCommand, CompletableFuture<LogReply>> propose) {
    this(propose, name -> true);
  }

  /**
   * @param heardHere whether this node applies a name's entries: where it does not, a waiting head
   *     asks again every {@link #UNHEARD_RECHECK_NANOS} rather than on the end of the lease
   */
  public AcquireWaits(
      Function<LogCommand, CompletableFuture<LogReply>> propose,
      java.util.function.Predicate<String> heardHere) {
    this(propose, newExecutor(), RECHECK_NANOS, heardHere);
  }

  /**
   * With the one thread that runs the queues and their timers, and how long a parked head waits for
   * an end at most.
   */
  AcquireWaits(
      Function<LogCommand, CompletableFuture<LogReply>> propose,
      ScheduledExecutorService executor,
      long recheckNanos) {
    this(propose, executor, recheckNanos, name -> true);
  }

  AcquireWaits(
      Function<LogCommand, CompletableFuture<LogReply>> propose,
      ScheduledExecutorService executor,
      long recheckNanos,
      java.util.function.Predicate<String> heardHere) {
    this.propose = propose;
    this.executor = executor;
    this.recheckNanos = recheckNanos;
    this.heardHere = heardHere;
    this.idPrefix = "~w" + Long.toString(new SecureRandom().nextLong() & Long.MAX_VALUE, 36) + ".";
  }

  private static ScheduledExecutorService newExecutor() {
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "acquire-waits");
              t.setDaemon(true);
              return t;
            });
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  /** How one waiting call is answered: with a reply, or with the failure of its last attempt. */
  public interface Answer extends BiConsumer<LogReply, Throwable> {}

  /**
   * Queues a waiting Acquire. {@code command} is the validated command, caller stamped, with its
   * wait cleared. False when this node already keeps {@link #MAX_WAITING} calls waiting (or is
   * closing): the caller then sends it once, as a call without a wait.
   */
  public boolean submit(
      LogCommand command,
      long waitNanos,
      ServerCallStreamObserver<AcquireResponse> call,
      Answer answer) {
    String name = command.getAcquire().getName();
    Waiting w = new Waiting(command, System.nanoTime() + waitNanos, answer);
    boolean first;
    synchronized (this) {
      if (closed || waiting >= MAX_WAITING) {
        return false;
      }
      NameQueue q = queues.computeIfAbsent(name, n -> new NameQueue());
      anyQueue = true;
      first = q.waiters.isEmpty() && !q.inFlight;
      q.waiters.addLast(w);
      waiting++;
      w.timeout = executor.schedule(() -> timedOut(name, w), waitNanos, TimeUnit.NANOSECONDS);
    }
    call.setOnCancelHandler(() -> cancelled(name, w));
    if (first) {
      executor.execute(() -> pump(name));
    }
    return true;
  }

  /**
   * Called for every entry this node applies, on the apply thread: wakes the queues of names whose
   * lease ended.
   */
  public void onApplied(ApplyResult result) {
    applied = result.revision();
    if (!anyQueue) {
      return;
    }
    List<String> wake = null;
    synchronized (this) {
      for (LeaseEvent e : result.events()) {
        if (!e.type().endsLease()) {
          continue;
        }
        NameQueue q = queues.get(e.name());
        if (q != null) {
          q.lastEndedToken = Math.max(q.lastEndedToken, e.lease().getToken());
          if (q.inFlight || q.retry != null || !q.mayBeFree()) {
            continue;
          }
          if (wake == null) {
            wake = new ArrayList<>();
          }
          wake.add(e.name());
        }
      }
    }
    if (wake != null) {
      for (String name : wake) {
        executor.execute(() -> pump(name));
      }
    }
  }

  /** The calls waiting on this node (for tests and metrics). */
  public synchronized int waiting() {
    return waiting;
  }

  /** Answers every waiting call UNAVAILABLE: this node is stopping. */
  @Override
  public void close() {
    List<Waiting> all = new ArrayList<>();
    synchronized (this) {
      closed = true;
      queues.values().forEach(q -> all.addAll(q.waiters));
      queues.clear();
      anyQueue = false;
      waiting = 0;
    }
    Throwable stopping =
        Status.UNAVAILABLE
            .withDescription("the node is stopping; send the Acquire again")
            .asRuntimeException();
    all.forEach(w -> w.answerOnce(null, stopping));
    executor.shutdownNow();
  }

  // ---- the queue of one name ----

  /** Sends the head's attempt if the name may be free; drops the queue once nobody waits. */
  private void pump(String name) {
    Waiting send;
    synchronized (this) {
      NameQueue q = queues.get(name);
      if (q == null || q.inFlight || q.retry != null) {
        return;
      }
      if (q.waiters.isEmpty()) {
        queues.remove(name);
        anyQueue = !queues.isEmpty();
        if (q.recheck != null) {
          q.recheck.cancel(false);
        }
        return;
      }
      if (!q.mayBeFree()) {
        return;
      }
      q.heldToken = -1;
      q.inFlight = true;
      if (q.recheck != null) {
        q.recheck.cancel(false);
        q.recheck = null;
      }
      send = q.waiters.peekFirst();
    }
    attempt(name, send);
  }

  private void attempt(String name, Waiting w) {
    LogCommand c = w.command;
    if (w.attempts++ == 0) {
      w.appliedBefore = applied;
    } else if (!c.getAcquire().getRequestId().isEmpty()) {
      AcquireRequest fresh =
          c.getAcquire().toBuilder()
              .setRequestId(idPrefix + Long.toString(ids.incrementAndGet(), 36))
              .build();
      c = c.toBuilder().setAcquire(fresh).build();
    }
    CompletableFuture<LogReply> f;
    try {
      f = propose.apply(c);
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    f.whenCompleteAsync((reply, error) -> attempted(name, w, reply, error), executor);
  }

  private void attempted(String name, Waiting w, LogReply reply, Throwable error) {
    if (error != null || !reply.hasAcquire()) {
      end(name, w, reply, error);
      return;
    }
    AcquireResponse r = reply.getAcquire();
    if (r.getOutcome() == Outcome.GRANTED) {
      synchronized (this) {
        NameQueue q = queues.get(name);
        if (q != null) {
          q.heldToken = r.getLease().getToken();
        }
      }
      // A grant to a call that went away is left to its holder, never released here: the same
      // caller may have sent the call again elsewhere with the same request id and be answered
      // with this very grant (the core remembers the id), so releasing it would leave that caller
      // believing it held a lease the cluster had handed on. It ends as any unclaimed lease does:
      // the holder asks again (same lease) or stops renewing it.
      end(name, w, reply, null);
      return;
    }
    boolean lockDelay =
        r.getOutcome() == Outcome.REJECTED
            && r.getRejection().getReason() == RejectReason.LOCK_DELAY;
    if (r.getOutcome() != Outcome.CONFLICT && !lockDelay) {
      end(name, w, reply, null);
      return;
    }
    // The first answer, remembered by the core from an earlier call with the same id: the lease
    // it names may have ended before this queue began to look, so ask again rather than wait.
    boolean remembered =
        r.getOutcome() == Outcome.CONFLICT
            && w.attempts == 1
            && !w.command.getAcquire().getRequestId().isEmpty()
            && r.getRevision() <= w.appliedBefore;
    if (!remembered && (w.pastDeadline() || w.gone.get())) {
      end(name, w, reply, null);
      return;
    }
    synchronized (this) {
      NameQueue q = queues.get(name);
      if (q == null) {
        return; // closed
      }
      q.inFlight = false;
      w.last = r;
      q.last = r;
      if (lockDelay) {
        // The name is free but barred a while after its last lease expired or was revoked; no
        // event marks the bar's end, so the head asks again when it should be over (the
        // estimate may say 0 while the bar still holds, so back off too).
        w.lockDelayRetries++;
        long estimate =
            r.getRejection().hasRetryAfter()
                ? TimeUnit.SECONDS.toNanos(r.getRejection().getRetryAfter().getSeconds())
                    + r.getRejection().getRetryAfter().getNanos()
                : 0;
        long backoff =
            Math.min(
                MAX_LOCK_DELAY_BACKOFF_NANOS,
                MIN_LOCK_DELAY_RETRY_NANOS << Math.min(w.lockDelayRetries, 10));
        q.retry =
            executor.schedule(
                () -> retryNow(name),
                Math.max(estimate, backoff) + MIN_LOCK_DELAY_RETRY_NANOS,
                TimeUnit.NANOSECONDS);
        return;
      }
      if (!remembered) {
        q.heldToken = Math.max(q.heldToken, r.getConflict().getToken());
        // An end this node never applies as an event (it caught up by a snapshot) must not
        // stall the queue: the head asks again after a while in any case.
        q.recheck =
            executor.schedule(
                () -> recheck(name),
                heardHere.test(name) ? recheckNanos : Math.min(recheckNanos, UNHEARD_RECHECK_NANOS),
                TimeUnit.NANOSECONDS);
      }
    }
    pump(name);
  }

  private void recheck(String name) {
    synchronized (this) {
      NameQueue q = queues.get(name);
      if (q == null || q.inFlight) {
        return;
      }
      q.heldToken = -1;
    }
    pump(name);
  }

  private void retryNow(String name) {
    synchronized (this) {
      NameQueue q = queues.get(name);
      if (q == null) {
        return;
      }
      q.retry = null;
    }
    pump(name);
  }

  /**
   * Takes the head out of its queue after its attempt, answers it (unless it went away), and lets
   * the next one go.
   */
  private void end(String name, Waiting w, LogReply reply, Throwable error) {
    synchronized (this) {
      NameQueue q = queues.get(name);
      if (q != null) {
        q.inFlight = false;
        if (q.waiters.remove(w)) {
          waiting--;
        }
      }
    }
    w.timeout.cancel(false);
    if (!w.gone.get()) {
      w.answerOnce(reply, error);
    }
    pump(name);
  }

  /**
   * The wait is over: answer with what the call last learnt, unless its attempt is out (then that
   * attempt answers).
   */
  private void timedOut(String name, Waiting w) {
    AcquireResponse last;
    synchronized (this) {
      NameQueue q = queues.get(name);
      if (q == null || (q.inFlight && q.waiters.peekFirst() == w) || !q.waiters.remove(w)) {
        return;
      }
      waiting--;
      last = w.last != null ? w.last : q.last;
      if (last == null) {
        last =
            AcquireResponse.newBuilder().setOutcome(Outcome.CONFLICT).setRevision(applied).build();
      }
    }
    w.answerOnce(LogReply.newBuilder().setAcquire(last).build(), null);
    pump(name);
  }

  private void cancelled(String name, Waiting w) {
    w.gone.set(true);
    boolean removed;
    synchronized (this) {
      NameQueue q = queues.get(name);
      // The head's attempt, if out, finishes first: a grant is then given back.
      removed = q != null && !(q.inFlight && q.waiters.peekFirst() == w) && q.waiters.remove(w);
      if (removed) {
        waiting--;
      }
    }
    if (removed) {
      w.timeout.cancel(false);
      executor.execute(() -> pump(name));
    }
  }

  /** The calls waiting for one name, in arrival order; the head alone asks. */
  private static final class NameQueue {
    final ArrayDeque<Waiting> waiters = new ArrayDeque<>(4);

    /** The head's attempt is out. */
    boolean inFlight;

    /**
     * The token of the lease the last conflict or grant named: the head waits for its end; -1: ask
     * now.
     */
    long heldToken = -1;

    /**
     * The highest token of a lease of the name this node applied the end of while the queue
     * existed. Tokens, not revisions: one entry may end a lease after deciding a conflict with it.
     */
    long lastEndedToken = -1;

    /** The head waits out a lock-delay. */
    ScheduledFuture<?> retry;

    /** When a parked head asks again even if no end was applied. */
    ScheduledFuture<?> recheck;

    AcquireResponse last;

    /** Whether the name may be free: nothing was decided yet, or a lease ended since. */
    boolean mayBeFree() {
      return heldToken < 0 || lastEndedToken >= heldToken;
    }
  }

  private static final class Waiting {
    final LogCommand command;
    final long deadlineNanos;
    final Answer answer;
    final AtomicBoolean answered = new AtomicBoolean();
    final AtomicBoolean gone = new AtomicBoolean();
    int attempts;
    int lockDelayRetries;
    long appliedBefore;
    AcquireResponse last;
    ScheduledFuture<?> timeout;

    Waiting(LogCommand command, long deadlineNanos, Answer answer) {
      this.command = command;
      this.deadlineNanos = deadlineNanos;
      this.answer = answer;
    }

    boolean pastDeadline() {
      return System.nanoTime() - deadlineNanos >= 0;
    }

    boolean answerOnce(LogReply reply, Throwable error) {
      if (!answered.compareAndSet(false, true)) {
        return false;
      }
      answer.accept(reply, error);
      return true;
    }
  }
}
