package io.leasehold.statemachine.core;

import com.google.protobuf.Duration;

/**
 * Durations as messages show them to people: {@code 850ms}, {@code 1.5s}, {@code 2m30s}, {@code
 * 1h30m}, {@code 24h}. The same style as the CLI's.
 */
public final class DurationText {
  private DurationText() {}

  /**
   * A configured or requested duration, to the millisecond: {@code 2s}, {@code 1.25s}, {@code
   * 1m30s}, {@code 24h}.
   */
  public static String exact(Duration d) {
    return exactMillis(Math.round(d.getSeconds() * 1_000.0 + d.getNanos() / 1_000_000.0));
  }

  /** As {@link #exact(Duration)}, of {@code micros}. */
  public static String exactMicros(long micros) {
    return exactMillis(Math.round(micros / 1_000.0));
  }

  private static String exactMillis(long ms) {
    if (ms < 0) {
      return "-" + exactMillis(-ms);
    }
    if (ms < 1_000) {
      return ms + "ms";
    }
    long s = ms / 1_000;
    long fraction = ms % 1_000;
    if (s < 60) {
      return fraction == 0 ? s + "s" : s + "." + millisFraction(fraction) + "s";
    }
    StringBuilder b = new StringBuilder();
    if (s >= 3600) {
      b.append(s / 3600).append('h');
    }
    if (s % 3600 / 60 > 0) {
      b.append(s % 3600 / 60).append('m');
    }
    if (s % 60 > 0 || fraction > 0) {
      b.append(s % 60);
      if (fraction > 0) {
        b.append('.').append(millisFraction(fraction));
      }
      b.append('s');
    }
    return b.toString();
  }

  /**
   * An estimate, rounded to what a person can use: {@code 850ms}, {@code 1.5s} (tenths below a
   * minute), {@code 2m30s} (seconds below an hour), {@code 1h30m} (minutes).
   */
  public static String approxMicros(long micros) {
    if (micros < 0) {
      return "-" + approxMicros(-micros);
    }
    long ms = Math.round(micros / 1_000.0);
    if (ms < 1_000) {
      return ms + "ms";
    }
    if (ms < 59_950) {
      long tenths = Math.round(ms / 100.0);
      return tenths % 10 == 0 ? tenths / 10 + "s" : tenths / 10 + "." + tenths % 10 + "s";
    }
    long s = Math.round(ms / 1_000.0);
    if (s < 3600) {
      return s / 60 + "m" + (s % 60 == 0 ? "" : s % 60 + "s");
    }
    long m = Math.round(s / 60.0);
    return m / 60 + "h" + (m % 60 == 0 ? "" : m % 60 + "m");
  }

  /**
   * {@code 250} as {@code 25}, {@code 5} as {@code 005}: the digits after the point, without
   * trailing zeros.
   */
  private static String millisFraction(long fraction) {
    String digits = Long.toString(1_000 + fraction).substring(1);
    int end = digits.length();
    while (end > 0 && digits.charAt(end - 1) == '0') {
      end--;
    }
    return digits.substring(0, end);
  }
}
