package io.leasehold.cli;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** How tables show values to people: short durations, UTC times to the second. */
public final class Human {
  private Human() {}

  /** {@code 850ms}, {@code 29.8s}, {@code 4m59s}, {@code 2h05m}. */
  public static String duration(Duration d) {
    long ms = d.toMillis();
    if (ms < 0) {
      return "-" + duration(d.negated());
    }
    if (ms < 1000) {
      return ms + "ms";
    }
    if (ms < 60_000) {
      return ms % 1000 == 0 ? ms / 1000 + "s" : String.format("%.1fs", ms / 1000.0);
    }
    long s = ms / 1000;
    if (s < 3600) {
      return s / 60 + "m" + (s % 60 == 0 ? "" : String.format("%02ds", s % 60));
    }
    return s / 3600 + "h" + String.format("%02dm", s / 60 % 60);
  }

  public static String duration(Optional<Duration> d) {
    return d.map(Human::duration).orElse("-");
  }

  /** {@code 2026-11-22T09:12:03Z}. */
  public static String time(Instant t) {
    return t.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  public static String time(Optional<Instant> t) {
    return t.map(Human::time).orElse("-");
  }

  /** {@code k1=v1,k2=v2} in key order. */
  public static String metadata(Map<String, String> m) {
    return m.isEmpty()
        ? "-"
        : m.entrySet().stream()
            .sorted(Map.Entry.comparingByKey())
            .map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining(","));
  }

  public static String orDash(Optional<String> s) {
    return s.filter(v -> !v.isEmpty()).orElse("-");
  }

  public static String orDash(String s) {
    return s == null || s.isEmpty() ? "-" : s;
  }
}
