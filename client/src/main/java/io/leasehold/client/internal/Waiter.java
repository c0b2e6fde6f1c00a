package io.leasehold.client.internal;

import io.leasehold.client.AcquireResult;
import io.leasehold.client.Conflict;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One pending acquisition of a name in this client: a single attempt ({@link Mode#TRY}) or one that
 * waits for the name to become free ({@link Mode#WAIT}), up to an optional deadline.
 */
final class Waiter {
  enum Mode {
    TRY,
    WAIT
  }

  /**
   * The most a waiter asks a node to wait for it in one call (the call's {@code wait}); a longer
   * wait is several calls, each sent again at once when the node's wait is over.
   */
  static final Duration MAX_NODE_WAIT = Duration.ofSeconds(30);

  final Mode mode;

  /**
   * Sends one Acquire (or Register) request, asking the node to wait up to the given time for the
   * name (zero: not at all).
   */
  final Function<Duration, CompletableFuture<Calls.Sent<Grant>>> attempt;

  /** GRANTED, CONFLICT or REJECTED for a try; GRANTED (or an exception) for a wait. */
  final CompletableFuture<AcquireResult> result = new CompletableFuture<>();

  final long startNanos = System.nanoTime();
  final Optional<Duration> waitUpTo;

  // Touched under the slot's lock.
  Conflict lastConflict;
  int transientFailures;
  int lockDelayRetries;
  ScheduledFuture<?> timeout;

  /** The wait the attempt out (or the last one) asked of its node, and when it was sent. */
  Duration nodeWait = Duration.ZERO;

  long nodeWaitSentNanos;

  /** A waiter whose requests cannot ask a node to wait (a Register). */
  Waiter(
      Mode mode,
      Supplier<CompletableFuture<Calls.Sent<Grant>>> attempt,
      Optional<Duration> waitUpTo) {
    this(mode, wait -> attempt.get(), waitUpTo);
  }

  Waiter(
      Mode mode,
      Function<Duration, CompletableFuture<Calls.Sent<Grant>>> attempt,
      Optional<Duration> waitUpTo) {
    this.mode = mode;
    this.attempt = attempt;
    this.waitUpTo = waitUpTo;
  }

  boolean tryOnly() {
    return mode == Mode.TRY;
  }

  /**
   * How long the next attempt may ask its node to wait: none for a try, else what is left, at most
   * {@link #MAX_NODE_WAIT}.
   */
  Duration nodeWait() {
    if (tryOnly()) {
      return Duration.ZERO;
    }
    if (waitUpTo.isEmpty()) {
      return MAX_NODE_WAIT;
    }
    long left = waitUpTo.get().toNanos() - (System.nanoTime() - startNanos);
    return left <= 0 ? Duration.ZERO : Duration.ofNanos(Math.min(left, MAX_NODE_WAIT.toNanos()));
  }

  /**
   * Whether the last attempt's CONFLICT came once its node had waited (nearly) all it was asked to:
   * the node queued it (a node that does not queue answers at once).
   */
  boolean nodeWaited() {
    return !nodeWait.isZero()
        && System.nanoTime() - nodeWaitSentNanos >= nodeWait.toNanos() - nodeWait.toNanos() / 10;
  }

  boolean pastDeadline() {
    return waitUpTo.isPresent() && System.nanoTime() - startNanos - waitUpTo.get().toNanos() >= 0;
  }
}
