package io.leasehold.server.ui;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The node's own rates over the last minutes, for the dashboard's charts: every {@code interval} it
 * reads its metrics registry (the numbers {@code /metrics} serves) and keeps the differences in a
 * ring of {@code samples}. Costs one small scrape per interval, whether or not anyone looks.
 */
final class RateHistory implements AutoCloseable {
  static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(2);
  static final int DEFAULT_SAMPLES = 300; // 10 minutes at 2 s

  /**
   * The latency histograms charted, by their names without {@code leasehold_} and {@code
   * _seconds}'s unit.
   */
  private static final List<String> HISTOGRAMS = List.of("write", "apply");

  /** One point: per-second rates over the interval before {@code atMillis}, and levels at it. */
  record Sample(
      long atMillis,
      double acquired,
      double renewed,
      double expired,
      double lateHeartbeats,
      double watchers,
      double commitMillis,
      double applyMillis) {}

  private final PrometheusRegistry registry;
  private final LongSupplier clock;
  private final int capacity;
  private final Deque<Sample> ring = new ArrayDeque<>();
  private final ScheduledExecutorService timer;
  private Map<String, Double> last;
  private long lastAt;

  RateHistory(PrometheusRegistry registry, Duration interval, int capacity, String nodeId) {
    this.registry = registry;
    this.clock = System::currentTimeMillis;
    this.capacity = capacity;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "leasehold-ui-rates-" + nodeId);
              t.setDaemon(true);
              return t;
            });
    timer.scheduleAtFixedRate(this::sample, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  void sample() {
    try {
      Map<String, Double> now = read();
      long at = clock.getAsLong();
      if (last != null && at > lastAt) {
        double seconds = (at - lastAt) / 1000.0;
        Sample s =
            new Sample(
                at,
                rate(now, "leasehold_leases_acquired", seconds),
                rate(now, "leasehold_leases_renewed", seconds),
                rate(now, "leasehold_leases_expired", seconds),
                rate(now, "leasehold_late_heartbeats", seconds),
                now.getOrDefault("leasehold_watchers", 0.0),
                meanMillis(now, "write"),
                meanMillis(now, "apply"));
        synchronized (ring) {
          ring.addLast(s);
          while (ring.size() > capacity) {
            ring.removeFirst();
          }
        }
      }
      last = now;
      lastAt = at;
    } catch (RuntimeException e) {
      // A node that is closing answers nothing; the next sample tries again.
    }
  }

  /**
   * The mean in milliseconds, over the interval, of histogram {@code leasehold_<name>_seconds}:
   * {@code write} is a write's time from arriving at this node to its applied reply (what a client
   * waits for a commit), {@code apply} the state machine's time per entry.
   */
  private double meanMillis(Map<String, Double> now, String name) {
    double count = now.get(name + "_count") - last.get(name + "_count");
    return count <= 0 ? 0 : 1000 * (now.get(name + "_sum") - last.get(name + "_sum")) / count;
  }

  private double rate(Map<String, Double> now, String name, double seconds) {
    return Math.max(0, (now.getOrDefault(name, 0.0) - last.getOrDefault(name, 0.0)) / seconds);
  }

  private Map<String, Double> read() {
    MetricSnapshots snapshots = registry.scrape(name -> name.startsWith("leasehold_"));
    Map<String, Double> values = new HashMap<>();
    for (String histogram : HISTOGRAMS) {
      values.put(histogram + "_sum", 0.0);
      values.put(histogram + "_count", 0.0);
    }
    for (MetricSnapshot m : snapshots) {
      String name = m.getMetadata().getName();
      if (m instanceof CounterSnapshot c && c.getDataPoints().size() == 1) {
        values.put(name, c.getDataPoints().get(0).getValue());
      } else if (m instanceof GaugeSnapshot g && g.getDataPoints().size() == 1) {
        values.put(name, g.getDataPoints().get(0).getValue());
      } else if (m instanceof HistogramSnapshot h
          && name.startsWith("leasehold_")
          && h.getDataPoints().size() == 1
          && HISTOGRAMS.contains(name.substring("leasehold_".length()))) {
        String histogram = name.substring("leasehold_".length());
        values.put(histogram + "_sum", h.getDataPoints().get(0).getSum());
        values.put(histogram + "_count", (double) h.getDataPoints().get(0).getCount());
      }
    }
    return values;
  }

  JsonObject toJson() {
    JsonArray at = new JsonArray();
    Map<String, JsonArray> series = new java.util.LinkedHashMap<>();
    for (String k :
        new String[] {
          "acquired",
          "renewed",
          "expired",
          "lateHeartbeats",
          "watchers",
          "commitMillis",
          "applyMillis"
        }) {
      series.put(k, new JsonArray());
    }
    synchronized (ring) {
      for (Sample s : ring) {
        at.add(s.atMillis() / 1000.0);
        series.get("acquired").add(s.acquired());
        series.get("renewed").add(s.renewed());
        series.get("expired").add(s.expired());
        series.get("lateHeartbeats").add(s.lateHeartbeats());
        series.get("watchers").add(s.watchers());
        series.get("commitMillis").add(s.commitMillis());
        series.get("applyMillis").add(s.applyMillis());
      }
    }
    JsonObject o = new JsonObject();
    o.add("at", at);
    series.forEach(o::add);
    return o;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
