package io.leasehold.cli.bench;

import io.leasehold.cli.Json;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Latencies of one kind of operation, in microseconds, recorded from any thread. Values above an
 * hour are recorded as an hour.
 */
public final class Latency {
  private static final long MAX_MICROS = TimeUnit.HOURS.toMicros(1);
  private final Histogram histogram = new ConcurrentHistogram(MAX_MICROS, 3);

  public void recordNanos(long nanos) {
    histogram.recordValue(Math.min(MAX_MICROS, Math.max(1, nanos / 1_000)));
  }

  /** Forgets what was recorded (the end of a warm-up). */
  public void reset() {
    histogram.reset();
  }

  public Percentiles percentiles() {
    Histogram h = histogram.copy();
    return new Percentiles(
        h.getTotalCount(),
        ms(h.getValueAtPercentile(50)),
        ms(h.getValueAtPercentile(90)),
        ms(h.getValueAtPercentile(99)),
        ms(h.getValueAtPercentile(99.9)),
        ms(h.getMaxValue()),
        h.getMean() / 1e3);
  }

  private static double ms(long micros) {
    return micros / 1e3;
  }

  /** A latency distribution in milliseconds. */
  public record Percentiles(
      long count, double p50, double p90, double p99, double p999, double max, double mean) {
    public static final Percentiles NONE = new Percentiles(0, 0, 0, 0, 0, 0, 0);

    public Map<String, Object> json() {
      return Json.object(
          "count",
          count,
          "p50_ms",
          round(p50),
          "p90_ms",
          round(p90),
          "p99_ms",
          round(p99),
          "p999_ms",
          round(p999),
          "max_ms",
          round(max),
          "mean_ms",
          round(mean));
    }

    /** {@code p50 2.10 / p99 8.40 / max 31.0 ms}. */
    public String brief() {
      return count == 0
          ? "-"
          : String.format(Locale.ROOT, "p50 %.2f / p99 %.2f / max %.1f ms", p50, p99, max);
    }

    private static double round(double ms) {
      return Math.round(ms * 1000) / 1000.0;
    }
  }
}
