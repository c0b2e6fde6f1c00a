package io.leasehold.benchmarks.compare;

import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.leasehold.cli.Json;
import io.leasehold.cli.bench.AcquireRelease;
import io.leasehold.cli.bench.BenchReport;
import io.leasehold.cli.bench.Latency;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * An acquire-release target wrapped to count what {@link AcquireRelease}'s report does not: the
 * failed calls of the measured period by kind (the gRPC status code, or the refusal), and, with a
 * window, the cycles, failures and acquire latency of each window of the measured period, so a cold
 * start's ramp shows. With a back-off, a failed call completes only after it: the worker waits that
 * long before its next cycle rather than retrying at once.
 *
 * <p>{@link #start} must be called before the run, with its duration; the load loop then names the
 * measured period ({@link #measuring}) before its first operation, so the windows count the cycles
 * the loop counts (started in the measured period, ended by its end).
 */
final class TalliedTarget<H> implements AcquireRelease.Target<TalliedTarget.Cycle<H>> {
  /** A held lease and when its cycle began. */
  record Cycle<H>(H held, long startedNanos) {}

  /**
   * A call the system answered without doing what was asked (not granted, not held): its kind is
   * the outcome.
   */
  static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String kind;

    Refused(String kind, String message) {
      super(message, null, false, false);
      this.kind = kind;
    }

    String kind() {
      return kind;
    }
  }

  private final AcquireRelease.Target<H> inner;
  private final Duration window;
  private final Duration backoff;
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
  private Duration duration = Duration.ZERO;
  private volatile long measureFrom;
  private volatile long end;
  private LongAdder[] windowCycles = new LongAdder[0];
  private LongAdder[] windowErrors = new LongAdder[0];
  private Latency[] windowAcquire = new Latency[0];

  /**
   * @param window the length of each window ({@link Duration#ZERO}: none)
   * @param backoff how long a worker waits after a failed call ({@link Duration#ZERO}: not at all)
   */
  TalliedTarget(AcquireRelease.Target<H> inner, Duration window, Duration backoff) {
    this.inner = inner;
    this.window = window;
    this.backoff = backoff;
  }

  /**
   * Prepares a run of {@code duration} measured; the load loop says when the period starts ({@link
   * #measuring}), so the windows count exactly the cycles the run counts.
   */
  TalliedTarget<H> start(Duration duration) {
    this.duration = duration;
    int n =
        window.isZero()
            ? 0
            : (int) ((duration.toNanos() + window.toNanos() - 1) / window.toNanos());
    windowCycles = new LongAdder[n];
    windowErrors = new LongAdder[n];
    windowAcquire = new Latency[n];
    for (int i = 0; i < n; i++) {
      windowCycles[i] = new LongAdder();
      windowErrors[i] = new LongAdder();
      windowAcquire[i] = new Latency();
    }
    long now = System.nanoTime();
    measuring(now, now + duration.toNanos());
    return this;
  }

  @Override
  public void measuring(long from, long to) {
    measureFrom = from;
    end = to;
  }

  @Override
  public CompletableFuture<Cycle<H>> acquire(int worker, String name) {
    long t0 = System.nanoTime();
    return settle(inner.acquire(worker, name))
        .thenApply(
            held -> {
              long t1 = System.nanoTime();
              int w = windowOf(t1);
              if (w >= 0 && t0 - measureFrom >= 0) {
                windowAcquire[w].recordNanos(t1 - t0);
              }
              return new Cycle<>(held, t0);
            });
  }

  @Override
  public CompletableFuture<Void> release(int worker, Cycle<H> cycle) {
    return settle(inner.release(worker, cycle.held()))
        .thenRun(
            () -> {
              int w = windowOf(System.nanoTime());
              if (w >= 0 && cycle.startedNanos() - measureFrom >= 0) {
                windowCycles[w].increment();
              }
            });
  }

  /** Counts a failure (in the measured period) and delays it by the back-off. */
  private <T> CompletableFuture<T> settle(CompletableFuture<T> call) {
    CompletableFuture<T> out = new CompletableFuture<>();
    call.whenComplete(
        (v, e) -> {
          if (e == null) {
            out.complete(v);
            return;
          }
          long now = System.nanoTime();
          if (now - measureFrom >= 0 && now - end <= 0) {
            errors.computeIfAbsent(kind(e), k -> new LongAdder()).increment();
            int w = windowOf(now);
            if (w >= 0) {
              windowErrors[w].increment();
            }
          }
          if (backoff.isZero()) {
            out.completeExceptionally(e);
          } else {
            CompletableFuture.delayedExecutor(backoff.toNanos(), TimeUnit.NANOSECONDS)
                .execute(() -> out.completeExceptionally(e));
          }
        });
    return out;
  }

  /** The window {@code t} falls in, or -1 outside the measured period or without windows. */
  private int windowOf(long t) {
    if (windowCycles.length == 0 || t - measureFrom < 0 || t - end > 0) {
      return -1;
    }
    return (int) Math.min(windowCycles.length - 1, (t - measureFrom) / window.toNanos());
  }

  /**
   * What a failure was: its gRPC status code, the outcome of a refusal, or else the exception's
   * class.
   */
  static String kind(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof StatusRuntimeException || c instanceof StatusException) {
        return Status.fromThrowable(c).getCode().name();
      }
      if (c instanceof Refused r) {
        return r.kind();
      }
    }
    return t.getClass().getSimpleName();
  }

  long errorCount() {
    return errors.values().stream().mapToLong(LongAdder::sum).sum();
  }

  /** Adds the failed calls by kind and, with windows, each window's figures to {@code report}. */
  BenchReport addTo(BenchReport report) {
    Map<String, Object> byKind = new TreeMap<>();
    errors.forEach((k, v) -> byKind.put(k, v.sum()));
    report.result("errors", errorCount()).result("errors_by_code", byKind);
    if (windowCycles.length > 0) {
      List<Object> windows = new ArrayList<>();
      for (int i = 0; i < windowCycles.length; i++) {
        long from = i * window.toNanos();
        long to = Math.min(duration.toNanos(), from + window.toNanos());
        long cycles = windowCycles[i].sum();
        windows.add(
            Json.object(
                "from_s",
                seconds(from),
                "to_s",
                seconds(to),
                "cycles",
                cycles,
                "cycles_per_s",
                Math.round(cycles * 1e12 / (to - from)) / 1000.0,
                "errors",
                windowErrors[i].sum(),
                "acquire",
                windowAcquire[i].percentiles().json()));
      }
      report.setting("window_s", seconds(window.toNanos())).result("windows", windows);
    }
    return report;
  }

  private static double seconds(long nanos) {
    return Math.round(nanos / 1e6) / 1000.0;
  }
}
