package io.leasehold.cli.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The {@code failover} workload, on a cluster of its own: while a client keeps leases alive and
 * probes with fresh acquisitions, the leader's process is killed (SIGKILL) again and again. For
 * each kill, the time until an acquisition sent after the kill succeeded; and how many of the
 * leases held throughout, whose TTL outlasts the outage, were lost.
 */
public final class Failover {
  /** Three nodes, each its own OS process, that the workload may kill and restart. */
  public interface Cluster extends AutoCloseable {
    /** The node now leading, by its index, as the nodes report it. */
    int leader() throws Exception;

    /** Kills the node's process at once (SIGKILL). */
    void kill(int node) throws Exception;

    /** Starts the node again from its data and waits until it serves. */
    void restart(int node) throws Exception;

    List<String> endpoints();
  }

  /** A system's client: probes with fresh names and holds leases. */
  public interface Target extends AutoCloseable {
    /**
     * One acquisition of a fresh name (then given back); fails if not granted within the client's
     * own retry bound.
     */
    CompletableFuture<Void> probe(String name);

    /** As {@link Renew.Target#holdAll}, for one client. */
    CompletableFuture<Void> holdAll(List<String> names, Consumer<String> onLost);

    CompletableFuture<Void> releaseAll();
  }

  public record Settings(
      int kills, Duration interval, int leases, Duration ttl, double probeRate, String prefix) {}

  private Failover() {}

  private record Attempt(long sentAt, long doneAt, boolean ok) {}

  public static BenchReport run(
      String system, Cluster cluster, Target target, Settings s, Progress progress)
      throws Exception {
    String run = Long.toString(System.currentTimeMillis(), 36);
    List<String> held = new ArrayList<>();
    for (int i = 0; i < s.leases(); i++) {
      held.add(s.prefix() + run + "-held-" + i);
    }
    AtomicLong lost = new AtomicLong();
    List<String> lostNames = Collections.synchronizedList(new ArrayList<>());
    progress.line("failover: acquiring " + s.leases() + " leases");
    target
        .holdAll(
            held,
            name -> {
              lost.incrementAndGet();
              lostNames.add(name);
            })
        .join();

    ConcurrentLinkedQueue<Attempt> attempts = new ConcurrentLinkedQueue<>();
    AtomicLong probeSeq = new AtomicLong();
    StopFlag stop = new StopFlag();
    Thread prober =
        new Thread(
            () -> {
              long interval = (long) (1e9 / s.probeRate());
              for (long due = System.nanoTime(); !stop.stopped; due += interval) {
                long d = due;
                while (d - System.nanoTime() > 0) {
                  LockSupport.parkNanos(d - System.nanoTime());
                }
                long sentAt = System.nanoTime();
                target
                    .probe(s.prefix() + run + "-probe-" + probeSeq.getAndIncrement())
                    .whenComplete(
                        (v, e) -> attempts.add(new Attempt(sentAt, System.nanoTime(), e == null)));
              }
            },
            "bench-failover-probe");
    prober.setDaemon(true);
    prober.start();

    List<Double> recoveries = new ArrayList<>();
    List<Long> killedAtMillis = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    try {
      for (int k = 1; k <= s.kills(); k++) {
        progress.line(
            String.format(
                Locale.ROOT,
                "failover: kill %d of %d in %d s",
                k,
                s.kills(),
                s.interval().toSeconds()));
        Thread.sleep(s.interval().toMillis());
        int leader = cluster.leader();
        long killedAt = System.nanoTime();
        killedAtMillis.add(System.currentTimeMillis());
        cluster.kill(leader);
        progress.line(
            String.format(
                Locale.ROOT,
                "failover: killed node %d (the leader), waiting for an acquisition",
                leader + 1));
        long deadline = killedAt + Duration.ofSeconds(60).toNanos();
        Double recovered = null;
        while (recovered == null && System.nanoTime() < deadline) {
          Thread.sleep(20);
          recovered =
              attempts.stream()
                  .filter(a -> a.ok && a.sentAt >= killedAt)
                  .mapToLong(Attempt::doneAt)
                  .min()
                  .stream()
                  .mapToObj(done -> (done - killedAt) / 1e6)
                  .findFirst()
                  .orElse(null);
        }
        if (recovered == null) {
          notes.add("kill " + k + ": no acquisition succeeded within 60 s");
          recoveries.add(60_000.0);
        } else {
          recoveries.add(recovered);
        }
        progress.line(String.format(Locale.ROOT, "failover: restarting node %d", leader + 1));
        cluster.restart(leader);
      }
    } finally {
      stop.stopped = true;
      prober.join();
    }
    // Give the held leases a renewal round after the last restart before judging them.
    Thread.sleep(Math.min(s.ttl().toMillis() / 2, 5_000));
    target.releaseAll().join(); // some clients can tell a loss only now (a key gone)
    long lostLeases = lost.get();
    progress.clear();
    List<Double> sorted = new ArrayList<>(recoveries);
    Collections.sort(sorted);
    long failedProbes = attempts.stream().filter(a -> !a.ok).count();
    BenchReport report =
        new BenchReport("failover", system)
            .setting("kills", s.kills())
            .setting("interval_s", s.interval().toSeconds())
            .setting("held_leases", s.leases())
            .setting("ttl_s", s.ttl().toSeconds())
            .setting("probe_rate_per_s", s.probeRate())
            .result(
                "kill_to_acquire_ms",
                recoveries.stream().map(v -> Math.round(v * 10) / 10.0).toList())
            .result("median_kill_to_acquire_ms", sorted.get(sorted.size() / 2))
            .result("max_kill_to_acquire_ms", sorted.get(sorted.size() - 1))
            .result("killed_at_epoch_ms", killedAtMillis)
            .result("leases_lost", lostLeases)
            .result("probes_failed", failedProbes);
    notes.forEach(report::note);
    if (!lostNames.isEmpty()) {
      report.note("lost, e.g. " + lostNames.subList(0, Math.min(5, lostNames.size())));
    }
    report.note(
        "kill_to_acquire: from SIGKILL of the leader's process to the first success of an acquisition sent after it");
    report.note(
        "killed_at_epoch_ms: when each kill was sent, to match with the nodes' logs (leader_changed, leader_ready)");
    return report;
  }

  private static final class StopFlag {
    volatile boolean stopped;
  }
}
