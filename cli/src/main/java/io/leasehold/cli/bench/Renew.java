package io.leasehold.cli.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The {@code renew} workload: clients acquire many names and keep them alive, the way each system's
 * client does it by default, for a while. Reports the renewals the cluster applied a second, the
 * names that ended while their client was keeping them alive (false expiries: there must be none),
 * and what the nodes spent on it.
 */
public final class Renew {
  /** A system's way to hold many names and keep them alive. */
  public interface Target {
    /**
     * Acquires {@code names} for client {@code client} and keeps them alive until {@link
     * #releaseAll}; {@code onLost} is told of each name that ends meanwhile, and {@code acquired}
     * counts the grants as they come.
     */
    CompletableFuture<Void> holdAll(
        int client, List<String> names, Consumer<String> onLost, AtomicLong acquired);

    CompletableFuture<Void> releaseAll(int client);

    /**
     * How the system keeps these names alive, for the report (e.g. "one Renew call a heartbeat, all
     * leases of the client").
     */
    String keepAliveShape();
  }

  /** Where a run is: losses count as false expiries until the releases begin. */
  private enum Phase {
    SETUP,
    MEASURING,
    RELEASING
  }

  public record Settings(
      int clients, int leases, Duration ttl, Duration settle, Duration duration, String prefix) {}

  /** How long the releases after the measurement may take before the report is printed anyway. */
  static final Duration RELEASE_WAIT = Duration.ofMinutes(2);

  private Renew() {}

  public static BenchReport run(
      String system, Target target, Settings s, NodeStats stats, Progress progress)
      throws Exception {
    List<NodeStats.Sample> empty = stats.sample();
    String run = Long.toString(System.currentTimeMillis(), 36);
    AtomicLong acquired = new AtomicLong();
    AtomicLong lostDuringSetup = new AtomicLong();
    AtomicLong lostMeasured = new AtomicLong();
    AtomicLong lostAfter = new AtomicLong();
    AtomicReference<Phase> phase = new AtomicReference<>(Phase.SETUP);
    List<String> lostNames = Collections.synchronizedList(new ArrayList<>());
    long setupStart = System.nanoTime();
    // One client after another: all at once, a hundred clients' acquisitions would pile up beyond
    // what a node lets wait for the leader, and be refused and retried.
    ExecutorService setup =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "bench-renew-setup");
              t.setDaemon(true);
              return t;
            });
    CompletableFuture<Void> all =
        CompletableFuture.runAsync(
            () -> {
              for (int c = 0; c < s.clients(); c++) {
                List<String> names = new ArrayList<>();
                for (int i = c; i < s.leases(); i += s.clients()) {
                  names.add(s.prefix() + run + "-" + i);
                }
                target
                    .holdAll(
                        c,
                        names,
                        name -> {
                          Phase now = phase.get();
                          (switch (now) {
                                case SETUP -> lostDuringSetup;
                                case MEASURING -> lostMeasured;
                                case RELEASING -> lostAfter;
                              })
                              .incrementAndGet();
                          if (now != Phase.RELEASING && lostNames.size() < 10) {
                            lostNames.add(name);
                          }
                        },
                        acquired)
                    .join();
              }
            },
            setup);
    setup.shutdown();
    while (!all.isDone()) {
      progress.line(
          String.format(
              Locale.ROOT, "renew: acquiring %,d leases: %,d", s.leases(), acquired.get()));
      try {
        all.get(1, TimeUnit.SECONDS);
      } catch (TimeoutException stillGoing) {
        // report progress and wait on
      }
    }
    all.join();
    double setupSeconds = (System.nanoTime() - setupStart) / 1e9;
    progress.line(
        "renew: holding " + s.leases() + " leases, settling for " + s.settle().toSeconds() + " s");
    Thread.sleep(s.settle().toMillis());
    List<NodeStats.Sample> before = stats.sample();
    phase.set(Phase.MEASURING);
    long end = System.nanoTime() + s.duration().toNanos();
    while (System.nanoTime() < end) {
      progress.line(
          String.format(
              Locale.ROOT,
              "renew: holding %,d leases, %d s left, %d lost",
              s.leases(),
              (end - System.nanoTime()) / 1_000_000_000L,
              lostMeasured.get()));
      Thread.sleep(Math.min(1_000, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
    }
    List<NodeStats.Sample> after = stats.sample();
    phase.set(Phase.RELEASING);
    progress.line("renew: releasing");
    List<CompletableFuture<Void>> releases = new ArrayList<>();
    for (int c = 0; c < s.clients(); c++) {
      releases.add(target.releaseAll(c));
    }
    // Bounded: a load generator holding a million handles may fall behind on its own releases;
    // what was measured does not depend on them, and leases not released end with their TTL.
    boolean releasedAll = true;
    try {
      CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new))
          .get(RELEASE_WAIT.toSeconds(), TimeUnit.SECONDS);
    } catch (TimeoutException slow) {
      releasedAll = false;
    } catch (ExecutionException failed) {
      releasedAll = false;
    }
    progress.clear();

    List<NodeStats.Delta> deltas = NodeStats.between(before, after);
    double seconds = s.duration().toNanos() / 1e9;
    BenchReport report =
        new BenchReport("renew", system)
            .setting("clients", s.clients())
            .setting("leases", s.leases())
            .setting("ttl_s", s.ttl().toSeconds())
            .setting("duration_s", s.duration().toSeconds())
            .setting("keep_alive", target.keepAliveShape())
            .result("acquired_per_s", s.leases() / setupSeconds)
            .result("false_expiries", lostMeasured.get() + lostDuringSetup.get())
            .result("false_expiries_measured", lostMeasured.get());
    deltas.stream()
        .map(d -> d.counters().get(NodeStats.RENEWED))
        .filter(Objects::nonNull)
        .findFirst()
        .ifPresent(renewed -> report.result("renewals_per_s", renewed / seconds));
    deltas.stream()
        .map(d -> d.counters().get(NodeStats.EXPIRED))
        .filter(Objects::nonNull)
        .findFirst()
        .ifPresent(expired -> report.result("expired_on_server", expired));
    deltas.stream()
        .map(NodeStats.Delta::cores)
        .flatMap(Optional::stream)
        .mapToDouble(Double::doubleValue)
        .max()
        .ifPresent(max -> report.result("busiest_node_cores", max));
    // Resident memory the leases added, per lease, on each node (rough: the JVM's heap grows in
    // steps).
    List<NodeStats.Delta> growth = NodeStats.between(empty, after);
    List<Object> perLease = new ArrayList<>();
    for (NodeStats.Delta g : growth) {
      int i = growth.indexOf(g);
      perLease.add(
          g.rssMiB()
              .flatMap(
                  r -> empty.get(i).get(NodeStats.RSS).map(e -> (r * 1024 * 1024 - e) / s.leases()))
              .map(b -> (Object) (double) Math.round(b))
              .orElse("?"));
    }
    report.result("rss_bytes_per_lease", perLease);
    if (!lostNames.isEmpty()) {
      report.note("names lost while kept alive, e.g. " + lostNames);
    }
    if (lostAfter.get() > 0) {
      report.note(
          lostAfter.get()
              + " leases were lost while the load generator was releasing, after the measurement (not counted above)");
    }
    if (!releasedAll) {
      report.note(
          "not every lease was released within "
              + RELEASE_WAIT.toSeconds()
              + " s after the measurement; the rest end with their TTL");
    }
    return report.nodes(deltas);
  }
}
