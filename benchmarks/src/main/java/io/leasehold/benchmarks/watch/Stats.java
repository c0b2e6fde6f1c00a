package io.leasehold.benchmarks.watch;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.AbstractHistogram;
import org.HdrHistogram.Histogram;

/** Histograms of nanoseconds, printed in milliseconds. */
final class Stats {
  private Stats() {}

  static Histogram nanosHistogram() {
    return new Histogram(TimeUnit.MINUTES.toNanos(5), 3);
  }

  static double ms(long nanos) {
    return nanos / 1e6;
  }

  static double p(AbstractHistogram h, double percentile) {
    return h.getTotalCount() == 0 ? Double.NaN : ms(h.getValueAtPercentile(percentile));
  }

  static String line(AbstractHistogram h) {
    if (h.getTotalCount() == 0) {
      return "n=0";
    }
    return String.format(
        Locale.ROOT,
        "n=%d  p50=%.3f  p90=%.3f  p99=%.3f  p99.9=%.3f  max=%.3f  mean=%.3f ms",
        h.getTotalCount(),
        p(h, 50),
        p(h, 90),
        p(h, 99),
        p(h, 99.9),
        ms(h.getMaxValue()),
        h.getMean() / 1e6);
  }
}
