package io.leasehold.shedlock;

import io.leasehold.client.Lease;
import io.leasehold.client.LeaseState;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalLong;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import net.javacrumbs.shedlock.core.ClockProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease under one ShedLock lock and the timer that ends it at lockAtMostFor. The lease is kept
 * alive by the client's keep-alive loop, so it is this timer, not the TTL, that bounds the lock's
 * life while the process runs; the TTL bounds it if the process dies.
 */
final class HeldLease {
  private static final Logger LOG = LoggerFactory.getLogger(HeldLease.class);

  private final Lease lease;
  private final ScheduledExecutorService timers;

  // Guarded by this.
  private Instant until;
  private ScheduledFuture<?> deadline;

  /** Set once the lease is being let go (released, handed over, or held to a last deadline). */
  private CompletableFuture<Void> letGo;

  HeldLease(Lease lease, ScheduledExecutorService timers, Instant until) {
    this.lease = lease;
    this.timers = timers;
    synchronized (this) {
      endAt(until);
    }
  }

  Lease lease() {
    return lease;
  }

  /**
   * The lease's token while the lock is held: not unlocked, lockAtMostFor not passed, the lease
   * valid.
   */
  synchronized OptionalLong tokenWhileLocked() {
    if (letGo == null && lease.isValid() && now().isBefore(until)) {
      return OptionalLong.of(lease.token());
    }
    return OptionalLong.empty();
  }

  /**
   * Moves the end to {@code newUntil}, if the lock has not ended yet (lockAtMostFor passed, lease
   * lost or unlocked). A lock that has ended is not extended, and the call returns once the cluster
   * was asked to free the name.
   */
  boolean extendTo(Instant newUntil) {
    CompletableFuture<Void> ending;
    synchronized (this) {
      if (letGo == null && lease.isValid() && now().isBefore(until)) {
        endAt(newUntil);
        return true;
      }
      ending = expire();
    }
    awaitQuietly(ending);
    return false;
  }

  /**
   * Gives the lock up: at once if {@code atLeastUntil} has passed, otherwise the name stays taken
   * until then. {@code handOver} moves the lease to the cluster for the rest of the time (it
   * completes with false if it could not); failing that, this client keeps holding the lease and
   * releases it then.
   */
  void unlock(Instant atLeastUntil, Function<Duration, CompletableFuture<Boolean>> handOver) {
    CompletableFuture<Void> ending;
    synchronized (this) {
      if (letGo != null) {
        ending = letGo; // lockAtMostFor passed first: the lease is already being released
      } else {
        cancelDeadline();
        Duration rest = Duration.between(now(), atLeastUntil);
        if (lease.state() == LeaseState.LOST) {
          letGo = CompletableFuture.completedFuture(null);
        } else if (rest.isNegative() || rest.isZero()) {
          letGo = release();
        } else {
          letGo =
              handOver
                  .apply(rest)
                  .handle(
                      (moved, failure) -> {
                        if (!Boolean.TRUE.equals(moved)) {
                          holdUntil(atLeastUntil);
                        }
                        return null;
                      });
        }
        ending = letGo;
      }
    }
    awaitQuietly(ending);
  }

  /**
   * Keeps the lease (renewed by the client) and releases it at {@code at}: the name is never free
   * before.
   */
  private void holdUntil(Instant at) {
    timers.schedule(this::release, delayUntil(at), TimeUnit.MILLISECONDS);
  }

  private void endAt(Instant newUntil) {
    cancelDeadline();
    until = newUntil;
    deadline = timers.schedule(this::onDeadline, delayUntil(newUntil), TimeUnit.MILLISECONDS);
  }

  private void onDeadline() {
    synchronized (this) {
      if (letGo == null) {
        LOG.info("lock {}: lockAtMostFor passed while held; releasing its lease", lease.name());
      }
      expire();
    }
  }

  /** Ends the lock at lockAtMostFor; idempotent. */
  private CompletableFuture<Void> expire() {
    if (letGo == null) {
      cancelDeadline();
      letGo =
          lease.state() == LeaseState.LOST ? CompletableFuture.completedFuture(null) : release();
    }
    return letGo;
  }

  private void cancelDeadline() {
    if (deadline != null) {
      deadline.cancel(false);
      deadline = null;
    }
  }

  private CompletableFuture<Void> release() {
    if (lease.state() == LeaseState.LOST) {
      return CompletableFuture.completedFuture(
          null); // handed over, revoked or expired: nothing to release
    }
    CompletableFuture<Void> released;
    try {
      released = lease.release();
    } catch (IllegalStateException alreadyGone) {
      return CompletableFuture.completedFuture(null); // released or lost meanwhile
    }
    return released.exceptionally(
        e -> {
          LOG.warn(
              "lock {}: release not confirmed ({}); the lease ends with its TTL",
              lease.name(),
              cause(e).getMessage());
          return null;
        });
  }

  private static void awaitQuietly(CompletableFuture<Void> ending) {
    try {
      ending.join();
    } catch (CompletionException | CancellationException e) {
      LOG.debug("lock end not confirmed", e);
    }
  }

  private static long delayUntil(Instant at) {
    return Math.max(0, Duration.between(now(), at).toMillis());
  }

  private static Instant now() {
    return ClockProvider.now();
  }

  static Throwable cause(Throwable e) {
    Throwable c = e;
    while (c instanceof CompletionException && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }
}
