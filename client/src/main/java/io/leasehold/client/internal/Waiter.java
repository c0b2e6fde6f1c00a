package io.leasehold.client.internal;

import io.leasehold.client.AcquireResult;
import io.leasehold.client.Conflict;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Supplier;

/**
 * One pending acquisition of a name in this client: a single attempt ({@link Mode#TRY}) or one
 * that waits for the name to become free ({@link Mode#WAIT}), up to an optional deadline.
 */
final class Waiter {
  enum Mode { TRY, WAIT }

  final Mode mode;
  /** Sends one Acquire (or Register) request. */
  final Supplier<CompletableFuture<Calls.Sent<Grant>>> attempt;
  /** GRANTED, CONFLICT or REJECTED for a try; GRANTED (or an exception) for a wait. */
  final CompletableFuture<AcquireResult> result = new CompletableFuture<>();
  final long startNanos = System.nanoTime();
  final Optional<Duration> waitUpTo;

  // Touched under the slot's lock.
  Conflict lastConflict;
  int transientFailures;
  int lockDelayRetries;
  ScheduledFuture<?> timeout;

  Waiter(Mode mode, Supplier<CompletableFuture<Calls.Sent<Grant>>> attempt, Optional<Duration> waitUpTo) {
    this.mode = mode;
    this.attempt = attempt;
    this.waitUpTo = waitUpTo;
  }

  boolean tryOnly() {
    return mode == Mode.TRY;
  }

  boolean pastDeadline() {
    return waitUpTo.isPresent() && System.nanoTime() - startNanos - waitUpTo.get().toNanos() >= 0;
  }
}
