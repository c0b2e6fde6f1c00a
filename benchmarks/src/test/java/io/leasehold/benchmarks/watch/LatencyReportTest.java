package io.leasehold.benchmarks.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.TreeMap;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** The latency run's line on the events over (A)'s p99 bound: how many, and where in the period. */
class LatencyReportTest {
  private static LatencyBenchmark.WatcherResult withOverBound(
      long events, TreeMap<Integer, Integer> bySecond) {
    Histogram h = Stats.nanosHistogram();
    for (long i = 0; i < events; i++) {
      h.recordValue(1_000_000);
    }
    return new LatencyBenchmark.WatcherResult(
        "leader n1", h, 0, 0, h, h, h, 0, 0, 0, 0, 0, 0, null, bySecond);
  }

  @Test
  void theBusiestSecondsComeFirstAndTiesGoByTime() {
    TreeMap<Integer, Integer> bySecond = new TreeMap<>();
    bySecond.put(9, 120);
    bySecond.put(10, 292);
    bySecond.put(50, 366);
    bySecond.put(49, 77);
    bySecond.put(90, 38);
    bySecond.put(91, 38);
    bySecond.put(3, 1);
    assertEquals(
        "932 (0.93%) in 7 seconds of the period; most at 50 s: 366, 10 s: 292, 9 s: 120, 49 s: 77, 90 s: 38",
        LatencyBenchmark.overBound(withOverBound(100_000, bySecond)));
  }

  @Test
  void noneWhenNoEventWentOver() {
    assertEquals("none", LatencyBenchmark.overBound(withOverBound(10, new TreeMap<>())));
  }
}
