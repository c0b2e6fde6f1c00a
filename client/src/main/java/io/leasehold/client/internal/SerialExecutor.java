package io.leasehold.client.internal;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a delegate executor: per-source ordering of
 * callbacks (one lease's transitions, one watch's events) on any executor the user chose.
 *
 * <p>{@link #enqueue} only queues, so a caller may order tasks while holding its own lock and
 * {@link #flush} after releasing it: even a delegate that runs tasks inline never runs a callback
 * under an SDK lock.
 */
public final class SerialExecutor implements Executor {
  private static final Logger LOG = LoggerFactory.getLogger(SerialExecutor.class);
  private final Executor delegate;
  private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
  private boolean running;

  public SerialExecutor(Executor delegate) {
    this.delegate = delegate;
  }

  @Override
  public void execute(Runnable task) {
    enqueue(task);
    flush();
  }

  /** Queues a task without starting it; call {@link #flush} later. */
  public synchronized void enqueue(Runnable task) {
    tasks.add(task);
  }

  /** Starts running queued tasks if none is running. */
  public void flush() {
    synchronized (this) {
      if (running || tasks.isEmpty()) {
        return;
      }
      running = true;
    }
    try {
      delegate.execute(this::drain);
    } catch (RejectedExecutionException e) {
      synchronized (this) {
        running = false;
        tasks.clear();
      }
      LOG.debug("callback dropped: the executor is shut down");
    }
  }

  private void drain() {
    while (true) {
      Runnable next;
      synchronized (this) {
        next = tasks.poll();
        if (next == null) {
          running = false;
          return;
        }
      }
      try {
        next.run();
      } catch (RuntimeException | Error e) {
        LOG.warn("a Leasehold callback threw; it keeps being called", e);
      }
    }
  }
}
