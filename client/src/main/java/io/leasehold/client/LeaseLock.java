package io.leasehold.client;

import io.leasehold.client.internal.Futures;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Lock} across processes, on a lease ({@link LeaseholdClient#lock}). Held by one thread at
 * a time in the whole cluster; reentrant for that thread. Waiting is first come, first served,
 * among this client's threads and, through the queue the leader keeps for waiting acquisitions,
 * among clients; it never polls.
 *
 * <p>Holding the lock means holding a lease, which can be lost (a long pause, a partition): check
 * {@link #isValid()} before acting, and send {@link #token()} with every write so the resource can
 * refuse a holder that lost the lock without noticing ({@link FencingGuard}).
 *
 * <pre>{@code
 * LeaseLock lock = client.lock("lock/billing-job");
 * lock.lock();
 * try {
 *   store.write(data, lock.token());
 * } finally {
 *   lock.unlock();
 * }
 * }</pre>
 *
 * <p>{@link #lock()} waits until it gets the lock, riding out cluster outages; it throws only for
 * problems waiting cannot fix (a bad name, a policy rejection, a closed client). {@link #unlock()}
 * releases the lease and waits (bounded by the request timeout) for the cluster to confirm. {@link
 * #newCondition()} is not supported.
 */
public final class LeaseLock implements Lock {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseLock.class);

  private final LeaseholdClient client;
  private final String name;
  private final LeaseOptions options;

  // Guarded by this.
  private Thread owner;
  private int holds;
  private Lease lease;

  LeaseLock(LeaseholdClient client, String name, LeaseOptions options) {
    this.client = client;
    this.name = Objects.requireNonNull(name, "name");
    this.options = Objects.requireNonNull(options, "options").waitIndefinitely();
  }

  /**
   * The locked name.
   *
   * @return the name
   */
  public String name() {
    return name;
  }

  /** Waits for the lock as long as it takes, ignoring interrupts until it is held. */
  @Override
  public void lock() {
    if (reenter()) {
      return;
    }
    own(Futures.join(client.acquire(name, options)));
  }

  /** Waits for the lock until it is held or the thread is interrupted. */
  @Override
  public void lockInterruptibly() throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (reenter()) {
      return;
    }
    own(Futures.get(client.acquire(name, options)));
  }

  /**
   * One attempt: true if the lock was free (a network call), false if anyone holds it or it is
   * still in a lock-delay.
   *
   * @return whether the lock is now held
   * @throws AcquireRejectedException if the cluster's policy refuses the name to this client
   */
  @Override
  public boolean tryLock() {
    if (reenter()) {
      return true;
    }
    AcquireResult r = Futures.join(client.tryAcquire(name, options));
    if (r instanceof Granted g) {
      own(g.lease());
      return true;
    }
    // A lock-delay only means "not yet"; other refusals (a ban, a bad name or TTL) need fixing.
    if (r instanceof Rejected rejected
        && rejected.rejection().reason() != RejectReason.LOCK_DELAY) {
      throw new AcquireRejectedException(name, rejected.rejection());
    }
    return false;
  }

  /**
   * Waits up to {@code time} for the lock; false if it was not free by then.
   *
   * @param time how long to wait (0 or less: one attempt)
   * @param unit the unit of {@code time}
   * @return whether the lock is now held
   * @throws InterruptedException if interrupted before or while waiting
   */
  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (reenter()) {
      return true;
    }
    try {
      own(
          Futures.get(
              client.acquire(
                  name, options.withWait(Duration.ofNanos(Math.max(0, unit.toNanos(time)))))));
      return true;
    } catch (AcquireTimeoutException timedOut) {
      return false;
    }
  }

  /**
   * Releases one hold; the last one releases the lease.
   *
   * @throws IllegalMonitorStateException if the current thread does not hold the lock
   */
  @Override
  public void unlock() {
    Lease toRelease;
    synchronized (this) {
      if (owner != Thread.currentThread()) {
        throw new IllegalMonitorStateException(
            "lock "
                + name
                + " is not held by "
                + Thread.currentThread().getName()
                + (owner == null ? "" : " (held by " + owner.getName() + ")"));
      }
      if (--holds > 0) {
        return;
      }
      toRelease = lease;
      owner = null;
      lease = null;
    }
    if (toRelease.state() == LeaseState.LOST) {
      return; // nothing left to release; the next holder gets a larger token
    }
    try {
      Futures.join(toRelease.release());
    } catch (LeaseholdException e) {
      LOG.warn(
          "lock {}: release not confirmed ({}); the lease expires after its TTL",
          name,
          e.getMessage());
    }
  }

  /**
   * Not supported: a condition would need the lease to be given up and taken again atomically.
   *
   * @return never: conditions are not supported
   * @throws UnsupportedOperationException always
   */
  @Override
  public Condition newCondition() {
    throw new UnsupportedOperationException("LeaseLock does not support conditions");
  }

  /**
   * The fencing token of the lease under the lock.
   *
   * @return the fencing token, to send with every write
   * @throws IllegalMonitorStateException if the current thread does not hold the lock
   */
  public synchronized long token() {
    if (owner != Thread.currentThread()) {
      throw new IllegalMonitorStateException(
          "lock " + name + " is not held by " + Thread.currentThread().getName());
    }
    return lease.token();
  }

  /**
   * The lease under the lock, if the current thread holds it.
   *
   * @return the lease; empty if the current thread does not hold the lock
   */
  public synchronized Optional<Lease> lease() {
    return owner == Thread.currentThread() ? Optional.of(lease) : Optional.empty();
  }

  /**
   * Whether the calling thread holds the lock; its lease may have been lost since (see {@link
   * #isValid()}).
   *
   * @return whether the calling thread holds it
   */
  public synchronized boolean isHeldByCurrentThread() {
    return owner == Thread.currentThread();
  }

  /**
   * Whether the current thread holds the lock and its lease is still valid.
   *
   * @return whether the lease may be acted on
   */
  public synchronized boolean isValid() {
    return owner == Thread.currentThread() && lease.isValid();
  }

  private synchronized boolean reenter() {
    if (owner == Thread.currentThread()) {
      holds++;
      return true;
    }
    return false;
  }

  private synchronized void own(Lease granted) {
    owner = Thread.currentThread();
    holds = 1;
    lease = granted;
  }

  /**
   * The name and who holds it.
   *
   * @return a description for logs
   */
  @Override
  public String toString() {
    Thread o;
    synchronized (this) {
      o = owner;
    }
    return "LeaseLock[" + name + (o == null ? ", free here" : ", held by " + o.getName()) + "]";
  }
}
