package io.leasehold.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** Durations as operators write them: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}, or combined ({@code 1m30s}). */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h)");

  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  public static Duration parse(String value) {
    String text = value.trim();
    if (text.isEmpty()) {
      throw new CommandLine.TypeConversionException("empty duration; expected e.g. 500ms, 30s, 5m, 1h");
    }
    Matcher m = PART.matcher(text);
    Duration total = Duration.ZERO;
    int at = 0;
    while (m.find() && m.start() == at) {
      long n = Long.parseLong(m.group(1));
      total = total.plus(switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        default -> Duration.ofHours(n);
      });
      at = m.end();
    }
    if (at != text.length()) {
      throw new CommandLine.TypeConversionException("'" + value + "' is not a duration; expected e.g. 500ms, 30s, 5m, 1h");
    }
    return total;
  }

  /** The inverse of {@link #parse}, in the largest unit that is exact: {@code 600ms}, {@code 1s}, {@code 1h}. */
  public static String format(Duration d) {
    long ms = d.toMillis();
    if (ms == 0 || ms % 1000 != 0) {
      return ms + "ms";
    }
    long s = ms / 1000;
    if (s % 60 != 0) {
      return s + "s";
    }
    return s % 3600 == 0 ? s / 3600 + "h" : s / 60 + "m";
  }
}
