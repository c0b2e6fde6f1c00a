package io.leasehold.cli.bench;

import java.time.Duration;
import java.util.OptionalDouble;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Drives an operation from many concurrent workers for a warm-up and then a measured period.
 *
 * <p>Closed loop (no rate): each worker starts its next operation when the last one ends. Open loop
 * ({@code rate} operations a second in all): operations are due at fixed intervals, each starts
 * when it is due and a worker is free, and its latency counts from when it was due, so a stall
 * shows in the percentiles as the wait it caused (no coordinated omission).
 */
public final class LoadLoop {
  /** One operation; completes when it is done, exceptionally if it failed. */
  @FunctionalInterface
  public interface Op {
    CompletableFuture<?> start(int worker, long sequence);
  }

  /** What the measured period saw: operations completed and failed in it, and its length. */
  public record Result(long completed, long failed, Duration measured, String firstError) {
    public double perSecond() {
      return completed / (measured.toNanos() / 1e9);
    }
  }

  private final int workers;
  private final Duration warmup;
  private final Duration duration;
  private final OptionalDouble rate;
  private final Executor trampoline;

  /**
   * @param trampoline where a worker starts its next operation when the last one completed on the
   *     worker's own thread (so completions never nest on one stack)
   */
  public LoadLoop(
      int workers, Duration warmup, Duration duration, OptionalDouble rate, Executor trampoline) {
    if (workers < 1) {
      throw new IllegalArgumentException("clients: must be at least 1, got " + workers);
    }
    this.workers = workers;
    this.warmup = warmup;
    this.duration = duration;
    this.rate = rate;
    this.trampoline = trampoline;
  }

  /**
   * Runs {@code op}; {@code latency} records each operation of the measured period (from its start,
   * or from when it was due under a rate) and {@code onMeasureStart} runs as the warm-up ends (to
   * reset other recorders). Returns once every operation has ended.
   */
  public Result run(Op op, Latency latency, Runnable onMeasureStart, Progress progress)
      throws InterruptedException {
    return run(op, latency, (from, to) -> {}, onMeasureStart, progress);
  }

  /**
   * Measured period listener: told the period's start and end ({@link System#nanoTime()}) before
   * any operation starts.
   */
  public interface Period {
    void measuring(long from, long to);
  }

  /**
   * As {@link #run(Op, Latency, Runnable, Progress)}, telling {@code period} the measured period
   * first.
   */
  public Result run(
      Op op, Latency latency, Period period, Runnable onMeasureStart, Progress progress)
      throws InterruptedException {
    long start = System.nanoTime();
    long measureFrom = start + warmup.toNanos();
    long end = measureFrom + duration.toNanos();
    period.measuring(measureFrom, end);
    Counters counters = new Counters(measureFrom, end);
    progress.start(start, measureFrom, end, counters.completed, latency);
    Thread resetter =
        new Thread(
            () -> {
              parkUntil(measureFrom);
              latency.reset();
              onMeasureStart.run();
            },
            "bench-warmup-end");
    resetter.setDaemon(true);
    resetter.start();
    try {
      if (rate.isPresent()) {
        openLoop(op, latency, counters, start, end);
      } else {
        closedLoop(op, latency, counters, end);
      }
    } finally {
      resetter.join();
      progress.stop();
    }
    return new Result(
        counters.completed.get(), counters.failed.get(), duration, counters.firstError.get());
  }

  private void closedLoop(Op op, Latency latency, Counters counters, long end)
      throws InterruptedException {
    CountDownLatch done = new CountDownLatch(workers);
    for (int w = 0; w < workers; w++) {
      new Worker(w, op, latency, counters, end, done).next();
    }
    done.await();
  }

  private void openLoop(Op op, Latency latency, Counters counters, long start, long end)
      throws InterruptedException {
    long intervalNanos = Math.max(1, (long) (1e9 / rate.getAsDouble()));
    Semaphore free = new Semaphore(workers);
    long sequence = 0;
    for (long due = start; due < end; due += intervalNanos) {
      parkUntil(due);
      free.acquire(); // waiting here is part of the latency: it counts from `due`
      long dueAt = due;
      int worker = (int) (sequence % workers);
      CompletableFuture<?> f = startSafely(op, worker, sequence++);
      f.whenComplete(
          (v, e) -> {
            counters.ended(dueAt, System.nanoTime(), e, latency);
            free.release();
          });
    }
    free.acquire(workers);
  }

  private static CompletableFuture<?> startSafely(Op op, int worker, long sequence) {
    try {
      return op.start(worker, sequence);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static void parkUntil(long deadline) {
    long left;
    while ((left = deadline - System.nanoTime()) > 0) {
      LockSupport.parkNanos(left);
    }
  }

  private final class Worker {
    private final int id;
    private final Op op;
    private final Latency latency;
    private final Counters counters;
    private final long end;
    private final CountDownLatch done;
    private long sequence;

    Worker(int id, Op op, Latency latency, Counters counters, long end, CountDownLatch done) {
      this.id = id;
      this.op = op;
      this.latency = latency;
      this.counters = counters;
      this.end = end;
      this.done = done;
    }

    void next() {
      long started = System.nanoTime();
      if (started - end >= 0) {
        done.countDown();
        return;
      }
      Thread caller = Thread.currentThread();
      startSafely(op, id, sequence++)
          .whenComplete(
              (v, e) -> {
                counters.ended(started, System.nanoTime(), e, latency);
                if (Thread.currentThread() == caller) {
                  trampoline.execute(this::next);
                } else {
                  next();
                }
              });
    }
  }

  /**
   * Counts what ends inside the measured period: started at or after its start, ended by its end.
   */
  private static final class Counters {
    final long from;
    final long to;
    final AtomicLong completed = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicReference<String> firstError = new AtomicReference<>();

    Counters(long from, long to) {
      this.from = from;
      this.to = to;
    }

    void ended(long startedAt, long endedAt, Throwable error, Latency latency) {
      if (startedAt - from < 0 || endedAt - to > 0) {
        return;
      }
      if (error == null) {
        completed.incrementAndGet();
        latency.recordNanos(endedAt - startedAt);
      } else {
        failed.incrementAndGet();
        Throwable cause =
            error instanceof CompletionException && error.getCause() != null
                ? error.getCause()
                : error;
        firstError.compareAndSet(null, cause.toString());
      }
    }
  }
}
