package io.leasehold.cli.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The {@code watch} workload: a writer creates names at a fixed rate while one watcher follows them
 * on the leader and another on a follower. For each watcher, how long after the write was sent, and
 * after the writer got its answer, the event arrived, and whether every event did. Times are this
 * process's clock: the writer and the watchers run here.
 */
public final class WatchLatency {
  /** A system's writer and watchers. */
  public interface Target {
    /**
     * Watches {@code prefix} on the leader ({@code onLeader}) or a follower; tells {@code
     * onCreated} each name created.
     */
    AutoCloseable watch(boolean onLeader, String prefix, Consumer<String> onCreated)
        throws Exception;

    /** Creates {@code name} (the event the watchers wait for). */
    CompletableFuture<Void> create(String name);

    /** Removes what {@link #create} made. */
    CompletableFuture<Void> cleanUp(List<String> names);
  }

  public record Settings(double rate, Duration warmup, Duration duration, String prefix) {}

  private WatchLatency() {}

  private static final class Watcher {
    final String where;
    final Latency fromSend = new Latency();
    final Latency fromReply = new Latency();
    final AtomicLong seen = new AtomicLong();

    Watcher(String where) {
      this.where = where;
    }
  }

  public static BenchReport run(
      String system, Target target, Settings s, NodeStats stats, Progress progress)
      throws Exception {
    String prefix = s.prefix() + Long.toString(System.currentTimeMillis(), 36) + "/";
    ConcurrentHashMap<String, long[]> sent =
        new ConcurrentHashMap<>(); // name -> {send nanos, reply nanos (0 until then)}
    Watcher leader = new Watcher("leader");
    Watcher follower = new Watcher("follower");
    long measureFrom = System.nanoTime() + s.warmup().toNanos() + Duration.ofSeconds(2).toNanos();
    Function<Watcher, Consumer<String>> listener =
        w ->
            name -> {
              long now = System.nanoTime();
              long[] times = sent.get(name);
              if (times == null || times[0] < measureFrom) {
                return;
              }
              w.seen.incrementAndGet();
              w.fromSend.recordNanos(now - times[0]);
              long reply = times[1];
              w.fromReply.recordNanos(reply == 0 ? 0 : Math.max(0, now - reply));
            };
    List<String> names = new ArrayList<>();
    AtomicLong failed = new AtomicLong();
    AtomicLong written = new AtomicLong();
    List<NodeStats.Sample> before;
    try (AutoCloseable a = target.watch(true, prefix, listener.apply(leader));
        AutoCloseable b = target.watch(false, prefix, listener.apply(follower))) {
      Thread.sleep(2_000); // both watches open before the first write
      long interval = (long) (1e9 / s.rate());
      long start = System.nanoTime();
      long end = measureFrom + s.duration().toNanos();
      Semaphore inFlight = new Semaphore(10_000);
      before = new ArrayList<>();
      long seq = 0;
      long nextReport = start;
      for (long due = start; due < end; due += interval) {
        long d = due;
        while (d - System.nanoTime() > 0) {
          LockSupport.parkNanos(d - System.nanoTime());
        }
        if (before.isEmpty() && due >= measureFrom) {
          before.addAll(stats.sample());
        }
        String name = prefix + (seq++);
        names.add(name);
        long[] times = {System.nanoTime(), 0};
        sent.put(name, times);
        inFlight.acquire();
        boolean measured = times[0] >= measureFrom;
        target
            .create(name)
            .whenComplete(
                (v, e) -> {
                  times[1] = System.nanoTime();
                  if (e != null) {
                    failed.incrementAndGet();
                  } else if (measured) {
                    written.incrementAndGet();
                  }
                  inFlight.release();
                });
        if (System.nanoTime() > nextReport) {
          nextReport += 1_000_000_000L;
          progress.line(
              String.format(
                  Locale.ROOT,
                  "watch: %d s left, leader %s, follower %s",
                  (end - System.nanoTime()) / 1_000_000_000L,
                  leader.fromSend.percentiles().brief(),
                  follower.fromSend.percentiles().brief()));
        }
      }
      inFlight.acquire(10_000);
      // Let the last events arrive.
      long waitUntil = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (System.nanoTime() < waitUntil
          && (leader.seen.get() < written.get() || follower.seen.get() < written.get())) {
        Thread.sleep(50);
      }
    }
    List<NodeStats.Sample> after = stats.sample();
    progress.line("watch: removing " + names.size() + " names");
    target.cleanUp(names).join();
    progress.clear();
    BenchReport report =
        new BenchReport("watch", system)
            .setting("rate_per_s", s.rate())
            .setting("warmup_s", s.warmup().toSeconds())
            .setting("duration_s", s.duration().toSeconds())
            .result("writes", written.get())
            .result("failed_writes", failed.get());
    for (Watcher w : List.of(leader, follower)) {
      report
          .result(w.where + "_events_seen", w.seen.get())
          .result(w.where + "_events_missing", Math.max(0, written.get() - w.seen.get()))
          .latency(w.where + "_send_to_watch", w.fromSend.percentiles())
          .latency(w.where + "_reply_to_watch", w.fromReply.percentiles());
    }
    report.note(
        "send_to_watch: from the write's send to the watcher's receipt; reply_to_watch: from the writer's answer "
            + "(0 when the event came first)");
    if (!before.isEmpty()) {
      report.nodes(NodeStats.between(before, after));
    }
    return report;
  }
}
