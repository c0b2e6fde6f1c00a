package io.leasehold.spring.integration;

import io.leasehold.client.AcquireResult;
import io.leasehold.client.AcquireTimeoutException;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.RejectReason;
import io.leasehold.client.Rejected;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One key's lock from a {@link LeaseholdLockRegistry}: a local reentrant lock (threads of this
 * process take turns) in front of a lease on the key's name (processes take turns).
 *
 * <p>Every acquisition by the owning thread counts a hold; the last {@link #unlock()} releases the
 * lease. An acquisition that re-enters checks the lease first: if it was lost, the name is acquired
 * again (with a new fencing token), as Spring's registries re-check their store on every
 * acquisition. Send {@link #token()} with every write the lock protects, so the resource can refuse
 * a holder that lost the lock without noticing.
 *
 * <pre>{@code
 * LeaseholdLock lock = registry.obtain("invoice-42");
 * if (lock.tryLock(5, TimeUnit.SECONDS)) {
 *   try {
 *     store.write(invoice, lock.token());
 *   } finally {
 *     lock.unlock();
 *   }
 * }
 * }</pre>
 *
 * <p>{@link #newCondition()} is not supported.
 */
public final class LeaseholdLock implements DistributedLock {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseholdLock.class);

  private final LeaseholdClient client;
  private final String key;
  private final String name;
  private final Function<Optional<Duration>, LeaseOptions> options;
  private final ReentrantLock local = new ReentrantLock();

  /**
   * Written by the owning thread while it holds {@link #local}; read by others only for display.
   */
  private volatile Lease lease;

  private volatile long lastUsed = System.currentTimeMillis();

  LeaseholdLock(
      LeaseholdClient client,
      String key,
      String name,
      Function<Optional<Duration>, LeaseOptions> options) {
    this.client = client;
    this.key = key;
    this.name = name;
    this.options = options;
  }

  /**
   * The key this lock was obtained with.
   *
   * @return the key
   */
  public String key() {
    return key;
  }

  /**
   * The lease name this lock takes.
   *
   * @return the registry's prefix followed by the key
   */
  public String leaseName() {
    return name;
  }

  /**
   * Waits for the lock as long as it takes, ignoring interrupts, with the registry's lease options.
   */
  @Override
  public void lock() {
    lockWith(Optional.empty());
  }

  /**
   * Waits for the lock as long as it takes, ignoring interrupts, its lease with a TTL of its own.
   *
   * @param ttl how long the name stays taken after this process stops renewing the lease
   */
  @Override
  public void lock(Duration ttl) {
    lockWith(Optional.of(ttl));
  }

  /**
   * Waits for the lock until it is held or the thread is interrupted.
   *
   * @throws InterruptedException if interrupted before or while waiting; the lock is not held then
   */
  @Override
  public void lockInterruptibly() throws InterruptedException {
    local.lockInterruptibly();
    if (reenteredWithValidLease()) {
      return;
    }
    awaitLease(client.acquire(name, options.apply(Optional.empty())));
  }

  /**
   * One attempt: true if the name was free (or this thread holds the lock), false if anyone else
   * holds it or it is in a lock-delay.
   *
   * @return whether the lock is now held
   * @throws CannotAcquireLockException if the cluster refused or could not be asked
   */
  @Override
  public boolean tryLock() {
    if (!local.tryLock()) {
      return false;
    }
    if (reenteredWithValidLease()) {
      return true;
    }
    try {
      AcquireResult result = client.tryAcquire(name, options.apply(Optional.empty())).join();
      if (result instanceof Granted granted) {
        take(granted.lease());
        return true;
      }
      if (result instanceof Rejected rejected
          && rejected.rejection().reason() != RejectReason.LOCK_DELAY) {
        throw new CannotAcquireLockException(
            "Failed to lock "
                + key
                + ": "
                + rejected.rejection().reason()
                + ": "
                + rejected.rejection().message());
      }
      local.unlock();
      return false;
    } catch (CompletionException e) {
      local.unlock();
      throw cannotAcquire(e.getCause());
    } catch (RuntimeException e) {
      local.unlock();
      throw e;
    }
  }

  /**
   * Waits up to {@code time} for the lock, first among this process's threads, then for the name.
   *
   * @param time how long to wait in all (0 or less: one attempt)
   * @param unit the unit of {@code time}
   * @return whether the lock is now held
   * @throws InterruptedException if interrupted before or while waiting; the lock is not held then
   */
  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    return tryLockWith(Duration.ofNanos(unit.toNanos(time)), Optional.empty());
  }

  /**
   * As {@link #tryLock(long, TimeUnit)}, the lease with a TTL of its own.
   *
   * @param waitTime how long to wait in all
   * @param ttl how long the name stays taken after this process stops renewing the lease
   * @return whether the lock is now held
   * @throws InterruptedException if interrupted before or while waiting; the lock is not held then
   */
  @Override
  public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
    return tryLockWith(waitTime, Optional.of(ttl));
  }

  /**
   * Gives up one hold; the last one releases the lease and waits (bounded by the client's request
   * timeout) for the cluster to confirm.
   *
   * @throws IllegalStateException if the current thread does not hold the lock
   * @throws ConcurrentModificationException if the lease was lost while held (the lock is free here
   *     all the same): someone else may have had it meanwhile
   */
  @Override
  public void unlock() {
    if (!local.isHeldByCurrentThread()) {
      throw new IllegalStateException(
          "You do not own the lock " + key + " (" + Thread.currentThread().getName() + ")");
    }
    if (local.getHoldCount() > 1) {
      local.unlock();
      return;
    }
    Lease held = lease;
    lease = null;
    try {
      boolean lost = !held.isValid();
      if (held.state() != LeaseState.LOST) {
        release(held);
      }
      if (lost) {
        throw new ConcurrentModificationException(
            "Lock "
                + key
                + " was lost while held: its lease (token "
                + held.token()
                + ") ended "
                + held.lossReason().map(r -> "(" + r + ")").orElse("(deadline passed)")
                + "; the integrity of data protected by this lock may have been compromised");
      }
    } finally {
      local.unlock();
    }
  }

  /**
   * Not supported: a condition would need the lease to be given up and taken again atomically.
   *
   * @return never
   * @throws UnsupportedOperationException always
   */
  @Override
  public Condition newCondition() {
    throw new UnsupportedOperationException("Conditions are not supported");
  }

  /**
   * The fencing token of the lease under the lock, to send with every write it protects.
   *
   * @return the token
   * @throws IllegalStateException if the current thread does not hold the lock
   */
  public long token() {
    return lease()
        .orElseThrow(() -> new IllegalStateException("You do not own the lock " + key))
        .token();
  }

  /**
   * The lease under the lock, if the current thread holds the lock.
   *
   * @return the lease; empty if the current thread does not hold the lock
   */
  public Optional<Lease> lease() {
    return local.isHeldByCurrentThread() ? Optional.ofNullable(lease) : Optional.empty();
  }

  /**
   * Whether the current thread holds the lock and its lease is still valid: act on the lock only
   * while this is true.
   *
   * @return whether the lease may be acted on
   */
  public boolean isValid() {
    return lease().map(Lease::isValid).orElse(false);
  }

  /**
   * Whether the current thread holds the lock (its lease may have been lost since: {@link
   * #isValid()}).
   *
   * @return whether the current thread holds it
   */
  public boolean isHeldByCurrentThread() {
    return local.isHeldByCurrentThread();
  }

  /**
   * Whether any thread of this process holds the lock.
   *
   * @return whether it is held here
   */
  public boolean isAcquiredInThisProcess() {
    return local.isLocked();
  }

  void touch() {
    lastUsed = System.currentTimeMillis();
  }

  long lastUsed() {
    return lastUsed;
  }

  private void lockWith(Optional<Duration> ttl) {
    local.lock();
    if (reenteredWithValidLease()) {
      return;
    }
    try {
      take(client.acquire(name, options.apply(ttl)).join());
    } catch (CompletionException e) {
      local.unlock();
      throw cannotAcquire(e.getCause());
    } catch (RuntimeException e) {
      local.unlock();
      throw e;
    }
  }

  private boolean tryLockWith(Duration waitTime, Optional<Duration> ttl)
      throws InterruptedException {
    long deadline = System.nanoTime() + Math.max(0, waitTime.toNanos());
    if (!local.tryLock(waitTime.toNanos(), TimeUnit.NANOSECONDS)) {
      return false;
    }
    if (reenteredWithValidLease()) {
      return true;
    }
    Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    try {
      return awaitLease(client.acquire(name, options.apply(ttl).withWait(left)));
    } catch (CannotAcquireLockException e) {
      if (unwrap(e.getCause()) instanceof AcquireTimeoutException) {
        return false;
      }
      throw e;
    }
  }

  /** Waits for an acquisition while holding {@link #local}; gives the local hold up if it fails. */
  private boolean awaitLease(CompletableFuture<Lease> acquisition) throws InterruptedException {
    try {
      take(acquisition.get());
      return true;
    } catch (InterruptedException e) {
      acquisition.cancel(
          true); // a lease granted to a caller that stopped waiting is released by the client
      local.unlock();
      throw e;
    } catch (ExecutionException e) {
      local.unlock();
      throw cannotAcquire(e.getCause());
    } catch (RuntimeException e) {
      local.unlock();
      throw e;
    }
  }

  /**
   * True if this acquisition re-enters a hold whose lease is still valid. A re-entry over a lost
   * lease goes on to acquire the name again, keeping the count of holds.
   */
  private boolean reenteredWithValidLease() {
    if (local.getHoldCount() == 1) {
      return false;
    }
    Lease held = lease;
    if (held != null && held.isValid()) {
      touch();
      return true;
    }
    LOG.info(
        "lock {}: its lease (token {}) was lost while held; acquiring the name again",
        key,
        held == null ? 0 : held.token());
    return false;
  }

  private void take(Lease granted) {
    lease = granted;
    touch();
  }

  private void release(Lease held) {
    try {
      held.release().join();
    } catch (CompletionException | IllegalStateException e) {
      LOG.warn(
          "lock {}: release not confirmed ({}); the lease ends with its TTL", key, e.getMessage());
    }
  }

  private CannotAcquireLockException cannotAcquire(Throwable failure) {
    Throwable cause = unwrap(failure);
    return new CannotAcquireLockException(
        "Failed to lock " + key + ": " + cause.getMessage(), cause);
  }

  private static Throwable unwrap(Throwable e) {
    Throwable c = e;
    while (c instanceof CompletionException && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  @Override
  public String toString() {
    Lease l = lease;
    return "LeaseholdLock[" + name + (l == null ? ", not held here" : ", token " + l.token()) + "]";
  }
}
