package io.leasehold.cli.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The {@code acquire-release} workload: every operation acquires a name nobody has used, then
 * releases it. A cycle is two writes. Reports cycles a second, the latency of each step and of the
 * cycle, and what the nodes spent. With {@code transfer}, each cycle hands the lease to another
 * holder between the two (three writes), so a transfer's latency is measured beside an
 * acquisition's in the same run.
 */
public final class AcquireRelease {
  /** A system's way to take and give back a name. */
  public interface Target<H> {
    /** Acquires {@code name}, which nobody holds; fails if it was not granted. */
    CompletableFuture<H> acquire(int worker, String name);

    CompletableFuture<Void> release(int worker, H held);

    /**
     * Hands {@code held} to another holder in one step; what is returned is released at the end of
     * the cycle.
     */
    default CompletableFuture<H> transfer(int worker, H held) {
      return CompletableFuture.failedFuture(
          new UnsupportedOperationException("this system has no transfer"));
    }

    /**
     * Called once before the first acquisition with the measured period, in {@link
     * System#nanoTime()} terms, so a target that keeps its own tallies counts the same cycles the
     * run does.
     */
    default void measuring(long from, long to) {}
  }

  /** Settings shared by every system the workload runs against. */
  public record Settings(
      int clients,
      Duration warmup,
      Duration duration,
      OptionalDouble rate,
      String prefix,
      boolean transfer,
      int namespaces) {
    public Settings(
        int clients, Duration warmup, Duration duration, OptionalDouble rate, String prefix) {
      this(clients, warmup, duration, rate, prefix, false, 1);
    }

    /**
     * Worker {@code worker}'s name prefix: the prefix itself with one namespace, else with the
     * worker's namespace number (worker mod namespaces) appended to the prefix's namespace.
     */
    String prefixOf(int worker) {
      if (namespaces <= 1) {
        return prefix;
      }
      int slash = prefix.indexOf('/');
      String ns = slash < 0 ? prefix : prefix.substring(0, slash);
      String rest = slash < 0 ? "/" : prefix.substring(slash);
      return ns + (worker % namespaces) + rest;
    }
  }

  private AcquireRelease() {}

  public static <H> BenchReport run(
      String system,
      Target<H> target,
      Settings s,
      NodeStats stats,
      Executor trampoline,
      Progress progress)
      throws InterruptedException {
    Latency acquire = new Latency();
    Latency release = new Latency();
    Latency transfer = new Latency();
    Latency cycle = new Latency();
    String run = Long.toString(System.currentTimeMillis(), 36);
    List<List<NodeStats.Sample>> before = new ArrayList<>();
    LoadLoop.Op op =
        (worker, seq) -> {
          String name = s.prefixOf(worker) + run + "-" + worker + "-" + seq;
          long t0 = System.nanoTime();
          return target
              .acquire(worker, name)
              .thenCompose(
                  held -> {
                    long t1 = System.nanoTime();
                    acquire.recordNanos(t1 - t0);
                    if (!s.transfer()) {
                      return CompletableFuture.completedFuture(held);
                    }
                    return target
                        .transfer(worker, held)
                        .thenApply(
                            moved -> {
                              transfer.recordNanos(System.nanoTime() - t1);
                              return moved;
                            });
                  })
              .thenCompose(
                  held -> {
                    long t2 = System.nanoTime();
                    return target
                        .release(worker, held)
                        .thenRun(() -> release.recordNanos(System.nanoTime() - t2));
                  });
        };
    LoadLoop.Result r =
        new LoadLoop(s.clients(), s.warmup(), s.duration(), s.rate(), trampoline)
            .run(
                op,
                cycle,
                target::measuring,
                () -> {
                  acquire.reset();
                  release.reset();
                  transfer.reset();
                  before.add(stats.sample());
                },
                progress);
    List<NodeStats.Sample> after = stats.sample();
    BenchReport report =
        new BenchReport("acquire-release", system)
            .setting("clients", s.clients())
            .setting("warmup_s", s.warmup().toSeconds())
            .setting("duration_s", s.duration().toSeconds())
            .setting("rate", s.rate().isPresent() ? s.rate().getAsDouble() : "closed loop")
            .result("cycles_per_s", r.perSecond())
            .result("writes_per_s", r.perSecond() * (s.transfer() ? 3 : 2))
            .latency("acquire", acquire.percentiles())
            .latency("release", release.percentiles())
            .latency("cycle", cycle.percentiles())
            .result("failed", r.failed());
    if (s.transfer()) {
      report.setting("transfer", true).latency("transfer", transfer.percentiles());
    }
    if (r.firstError() != null) {
      report.note("first failure: " + r.firstError());
    }
    if (s.rate().isPresent()) {
      report.note(
          "open loop: latencies count from when each cycle was due, so waits behind a stall are included");
    }
    if (!before.isEmpty()) {
      List<NodeStats.Delta> deltas = NodeStats.between(before.get(0), after);
      report.nodes(deltas);
      NodeStats.perWrite(deltas).ifPresent(w -> report.result("per_write", w));
    }
    return report;
  }
}
