package io.leasehold.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.OptionalDouble;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LoadLoopTest {
  final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2);

  @AfterEach
  void stop() {
    timer.shutdownNow();
  }

  CompletableFuture<Void> after(long millis) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    timer.schedule(() -> f.complete(null), millis, TimeUnit.MILLISECONDS);
    return f;
  }

  @Test
  void aClosedLoopRunsOneOperationAtATimePerWorkerAndCountsOnlyTheMeasuredPeriod()
      throws Exception {
    Latency latency = new Latency();
    LoadLoop loop =
        new LoadLoop(
            2,
            Duration.ofMillis(300),
            Duration.ofSeconds(1),
            OptionalDouble.empty(),
            Runnable::run);
    LoadLoop.Result r = loop.run((w, s) -> after(10), latency, () -> {}, Progress.off());
    // Two workers, 10 ms an operation: about 200 a second, fewer counted than ran in all.
    assertTrue(r.perSecond() > 100 && r.perSecond() < 210, "ops/s " + r.perSecond());
    assertEquals(0, r.failed());
    assertTrue(latency.percentiles().p50() >= 9, latency.percentiles().toString());
  }

  @Test
  void anOpenLoopCountsLatencyFromWhenAnOperationWasDueSoAStallShows() throws Exception {
    Latency latency = new Latency();
    AtomicBoolean stalled = new AtomicBoolean();
    LoadLoop loop =
        new LoadLoop(
            1, Duration.ZERO, Duration.ofSeconds(2), OptionalDouble.of(100), Runnable::run);
    // One worker; one operation stalls 500 ms: the 50 due meanwhile wait for it and their latency
    // shows the wait.
    LoadLoop.Result r =
        loop.run(
            (w, s) -> s == 20 && stalled.compareAndSet(false, true) ? after(500) : after(1),
            latency,
            () -> {},
            Progress.off());
    assertTrue(
        latency.percentiles().p99() >= 300,
        "the stall is in the percentiles: " + latency.percentiles());
    assertTrue(latency.percentiles().p50() < 100, latency.percentiles().toString());
    assertTrue(r.completed() > 150, "completed " + r.completed());
  }

  @Test
  void failuresAreCountedWithTheFirstError() throws Exception {
    LoadLoop loop =
        new LoadLoop(
            1, Duration.ZERO, Duration.ofMillis(300), OptionalDouble.empty(), Runnable::run);
    LoadLoop.Result r =
        loop.run(
            (w, s) ->
                s % 2 == 0
                    ? after(5)
                    : CompletableFuture.failedFuture(new IllegalStateException("nope")),
            new Latency(),
            () -> {},
            Progress.off());
    assertTrue(r.failed() > 0);
    assertTrue(r.firstError().contains("nope"), r.firstError());
  }

  @Test
  void thePeriodListenerHearsTheMeasuredPeriodBeforeTheFirstOperationAndItCountsTheSameOperations()
      throws Exception {
    LoadLoop loop =
        new LoadLoop(
            2,
            Duration.ofMillis(200),
            Duration.ofMillis(600),
            OptionalDouble.empty(),
            Runnable::run);
    long[] period = new long[3];
    AtomicLong firstStart = new AtomicLong();
    AtomicLong inPeriod = new AtomicLong();
    long before = System.nanoTime();
    LoadLoop.Result r =
        loop.run(
            (w, s) -> {
              long t0 = System.nanoTime();
              firstStart.compareAndSet(0, t0);
              return after(5)
                  .thenRun(
                      () -> {
                        long t1 = System.nanoTime();
                        if (t0 - period[0] >= 0 && t1 - period[1] <= 0) {
                          inPeriod.incrementAndGet();
                        }
                      });
            },
            new Latency(),
            (from, to) -> {
              period[0] = from;
              period[1] = to;
              period[2] = System.nanoTime();
            },
            () -> {},
            Progress.off());
    assertTrue(
        period[0] - before >= Duration.ofMillis(200).toNanos(),
        "the period starts after the warm-up");
    assertEquals(Duration.ofMillis(600).toNanos(), period[1] - period[0]);
    assertTrue(
        period[2] != 0 && firstStart.get() - period[2] >= 0, "told before the first operation");
    assertTrue(
        Math.abs(inPeriod.get() - r.completed()) <= 2,
        inPeriod.get() + " by the listener's period, " + r.completed() + " counted");
  }
}
