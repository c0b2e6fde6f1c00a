package io.leasehold.client.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads every client of this JVM shares, so that a process of a thousand clients has tens of
 * SDK threads rather than thousands: a timer (also the keep-alive lane), a small pool for the SDK's
 * own work and the channels' callbacks, a pool for the user's callbacks of clients given no
 * executor, and one for {@code withLease} actions. Counted by the clients using them: the first
 * makes them, the last one's close stops them, so a closed application (or an undeployed web app)
 * keeps no thread. Every thread is a daemon. Internal: not part of the API.
 */
public final class SharedExecutors {
  private static final int CPUS = Runtime.getRuntime().availableProcessors();

  /**
   * The timer runs only short tasks that never block: keep-alive rounds and their answers,
   * deadlines, backoffs.
   */
  static final int TIMER_THREADS = Math.min(2, CPUS);

  /** The SDK's own work never blocks either: a thread per core is enough, however many clients. */
  static final int INTERNAL_THREADS = Math.max(2, Math.min(CPUS, 8));

  /** User callbacks may block a while; beyond this many at once they queue. */
  static final int CALLBACK_THREADS = 64;

  private static final long IDLE_SECONDS = 30;

  // Guarded by SharedExecutors.class.
  private static SharedExecutors current;
  private static int users;

  private final ScheduledThreadPoolExecutor timer;
  private final ThreadPoolExecutor internal;
  private final ThreadPoolExecutor callbacks;
  private final ExecutorService actions;

  private SharedExecutors() {
    timer = new ScheduledThreadPoolExecutor(TIMER_THREADS, daemon("leasehold-timer"));
    timer.setRemoveOnCancelPolicy(true);
    internal = elastic("leasehold-internal", INTERNAL_THREADS, daemon("leasehold-internal"));
    AtomicInteger n = new AtomicInteger();
    callbacks =
        elastic(
            "leasehold-callback",
            CALLBACK_THREADS,
            r -> new PoolThread(r, this, "leasehold-callback-" + n.incrementAndGet()));
    actions = Executors.newCachedThreadPool(daemon("leasehold-action"));
  }

  /** The executors, made if no client holds them; every call needs a {@link #release()}. */
  public static synchronized SharedExecutors acquire() {
    if (current == null) {
      current = new SharedExecutors();
    }
    users++;
    return current;
  }

  /**
   * One user is done with them; the last one stops the threads, letting queued callbacks run for up
   * to a second.
   */
  public void release() {
    synchronized (SharedExecutors.class) {
      if (current != this || --users > 0) {
        return;
      }
      current = null;
    }
    timer.shutdownNow();
    internal.shutdown();
    actions.shutdownNow();
    callbacks.shutdown();
    if (Thread.currentThread() instanceof PoolThread t && t.owner == this) {
      return; // released from a callback (a recipe stopping): it would wait for itself
    }
    try {
      callbacks.awaitTermination(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** How many clients (and recipes) hold the executors now; for tests. */
  public static synchronized int users() {
    return users;
  }

  boolean isShutdown() {
    return timer.isShutdown();
  }

  public ScheduledThreadPoolExecutor timer() {
    return timer;
  }

  public ThreadPoolExecutor internal() {
    return internal;
  }

  public ThreadPoolExecutor callbacks() {
    return callbacks;
  }

  ExecutorService actions() {
    return actions;
  }

  /**
   * A pool that starts a thread only when no idle one can take the task, up to {@code max}, then
   * queues; idle threads end after a while. (A plain ThreadPoolExecutor either never grows past its
   * core size or never queues.)
   */
  private static ThreadPoolExecutor elastic(String name, int max, ThreadFactory threads) {
    HandOffQueue queue = new HandOffQueue();
    return new ThreadPoolExecutor(
        0,
        max,
        IDLE_SECONDS,
        TimeUnit.SECONDS,
        queue,
        threads,
        (task, pool) -> {
          if (pool.isShutdown()) {
            throw new RejectedExecutionException(name + " is shut down");
          }
          // Every thread is busy and the pool is at its size: the task waits for the next free one.
          queue.enqueue(task);
          if (pool.getPoolSize() == 0) {
            pool.execute(
                () -> {}); // the threads timed out meanwhile: start one, which then takes the task
          }
        });
  }

  /**
   * Takes a task only if an idle thread takes it at once; otherwise the pool starts a thread for
   * it, or at its size hands it to {@link #enqueue}.
   */
  private static final class HandOffQueue extends LinkedTransferQueue<Runnable> {
    private static final long serialVersionUID = 1L;

    @Override
    public boolean offer(Runnable task) {
      return tryTransfer(task);
    }

    void enqueue(Runnable task) {
      super.offer(task);
    }
  }

  /** A callback thread, which knows whose it is. */
  private static final class PoolThread extends Thread {
    final SharedExecutors owner;

    PoolThread(Runnable task, SharedExecutors owner, String name) {
      super(task, name);
      this.owner = owner;
      setDaemon(true);
    }
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
