package io.leasehold.cli.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@code contended-lock} workload: many clients take turns on a few locks, each holder writing
 * to a resource guarded by its fencing token. Reports lock hand-overs a second, how long a client
 * waited for a lock, and any fencing or exclusion violation (there must be none): a write with a
 * token below one the resource already accepted, or two clients holding one lock at once.
 */
public final class ContendedLock {
  /** A system's blocking lock, one per worker and name. */
  public interface Target {
    /** Blocks until {@code worker} holds {@code name}; returns the fencing token of this hold. */
    long lock(int worker, String name) throws Exception;

    void unlock(int worker, String name) throws Exception;
  }

  public record Settings(
      int clients, int names, Duration hold, Duration warmup, Duration duration, String prefix) {}

  private ContendedLock() {}

  public static BenchReport run(
      String system, Target target, Settings s, NodeStats stats, Progress progress)
      throws Exception {
    String run = Long.toString(System.currentTimeMillis(), 36);
    List<String> names = new ArrayList<>();
    for (int i = 0; i < s.names(); i++) {
      names.add(s.prefix() + run + "-" + i);
    }
    Latency wait = new Latency();
    Latency unlock = new Latency();
    ConcurrentHashMap<String, Long> highestToken = new ConcurrentHashMap<>();
    ConcurrentHashMap<String, Integer> holderOf = new ConcurrentHashMap<>();
    AtomicLong acquisitions = new AtomicLong();
    AtomicLong fencingViolations = new AtomicLong();
    AtomicLong overlaps = new AtomicLong();
    AtomicReference<String> firstError = new AtomicReference<>();
    AtomicLong failures = new AtomicLong();
    long start = System.nanoTime();
    long measureFrom = start + s.warmup().toNanos();
    long end = measureFrom + s.duration().toNanos();
    List<NodeStats.Sample> before = new ArrayList<>();
    Thread sampler =
        new Thread(
            () -> {
              parkUntil(measureFrom);
              before.addAll(stats.sample());
            },
            "bench-sampler");
    sampler.start();
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < s.clients(); w++) {
      int worker = w;
      Thread t =
          new Thread(
              () -> {
                while (System.nanoTime() < end) {
                  String name = names.get(ThreadLocalRandom.current().nextInt(names.size()));
                  long t0 = System.nanoTime();
                  try {
                    long token = target.lock(worker, name);
                    long got = System.nanoTime();
                    boolean measured = t0 >= measureFrom && got <= end;
                    if (measured) {
                      wait.recordNanos(got - t0);
                      acquisitions.incrementAndGet();
                    }
                    if (holderOf.putIfAbsent(name, worker) != null) {
                      overlaps.incrementAndGet();
                    }
                    // The fenced write: the resource accepts a token only if no higher one came
                    // before.
                    long[] stale = {0};
                    highestToken.compute(
                        name,
                        (n, highest) -> {
                          if (highest != null && token < highest) {
                            stale[0] = highest;
                            return highest;
                          }
                          return token;
                        });
                    if (stale[0] != 0) {
                      fencingViolations.incrementAndGet();
                    }
                    if (!s.hold().isZero()) {
                      Thread.sleep(s.hold().toMillis());
                    }
                    holderOf.remove(name, worker);
                    long u0 = System.nanoTime();
                    target.unlock(worker, name);
                    if (measured) {
                      unlock.recordNanos(System.nanoTime() - u0);
                    }
                  } catch (InterruptedException e) {
                    return;
                  } catch (Exception e) {
                    failures.incrementAndGet();
                    firstError.compareAndSet(null, e.toString());
                  }
                }
              },
              "bench-lock-" + w);
      threads.add(t);
      t.start();
    }
    while (System.nanoTime() < end) {
      progress.line(
          String.format(
              Locale.ROOT,
              "contended-lock: %s, %d s left, %,d hand-overs, %s",
              System.nanoTime() < measureFrom ? "warm-up" : "measuring",
              (end - System.nanoTime()) / 1_000_000_000L,
              acquisitions.get(),
              wait.percentiles().brief()));
      Thread.sleep(Math.min(1_000, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
    }
    for (Thread t : threads) {
      t.join();
    }
    sampler.join();
    List<NodeStats.Sample> after = stats.sample();
    progress.clear();
    BenchReport report =
        new BenchReport("contended-lock", system)
            .setting("clients", s.clients())
            .setting("names", s.names())
            .setting("hold_ms", s.hold().toMillis())
            .setting("warmup_s", s.warmup().toSeconds())
            .setting("duration_s", s.duration().toSeconds())
            .result("acquisitions_per_s", acquisitions.get() / (s.duration().toNanos() / 1e9))
            .latency("lock_wait", wait.percentiles())
            .latency("unlock", unlock.percentiles())
            .result("fencing_violations", fencingViolations.get())
            .result("exclusion_violations", overlaps.get())
            .result("failed", failures.get());
    if (firstError.get() != null) {
      report.note("first failure: " + firstError.get());
    }
    if (!before.isEmpty()) {
      report.nodes(NodeStats.between(before, after));
    }
    return report;
  }

  private static void parkUntil(long deadline) {
    long left;
    while ((left = deadline - System.nanoTime()) > 0) {
      LockSupport.parkNanos(left);
    }
  }
}
