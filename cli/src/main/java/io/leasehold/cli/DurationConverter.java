package io.leasehold.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Durations as operators write them: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}, or
 * combined ({@code 1m30s}); zero or more. {@link Positive} is for the options that must be more
 * than zero (a TTL, a timeout).
 */
public class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h)");

  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  /**
   * For a TTL, a timeout, a period: more than zero. picocli names the option in front of the
   * message.
   */
  public static final class Positive extends DurationConverter {
    @Override
    public Duration convert(String value) {
      Duration d = parse(value, "must be positive");
      if (d.isZero()) {
        throw new CommandLine.TypeConversionException(
            "must be positive, got " + value.trim() + " (e.g. 500ms, 30s, 5m, 1h)");
      }
      return d;
    }
  }

  /** A duration of zero or more. */
  public static Duration parse(String value) {
    return parse(value, "must not be negative");
  }

  /** {@code value}, where a negative one breaks {@code rule}. */
  static Duration parse(String value, String rule) {
    String text = value.trim();
    if (text.isEmpty()) {
      throw new CommandLine.TypeConversionException(
          "empty duration; expected e.g. 500ms, 30s, 5m, 1h");
    }
    if (text.startsWith("-") && unsigned(text.substring(1)) != null) {
      throw new CommandLine.TypeConversionException(
          rule + ", got " + text + " (e.g. 500ms, 30s, 5m, 1h)");
    }
    Duration d = unsigned(text);
    if (d == null) {
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a duration; expected e.g. 500ms, 30s, 5m, 1h");
    }
    return d;
  }

  /** {@code 1m30s} and the like; null if {@code text} is not one. */
  private static Duration unsigned(String text) {
    Matcher m = PART.matcher(text);
    Duration total = Duration.ZERO;
    int at = 0;
    while (m.find() && m.start() == at) {
      try {
        long n = Long.parseLong(m.group(1));
        total =
            total.plus(
                switch (m.group(2)) {
                  case "ms" -> Duration.ofMillis(n);
                  case "s" -> Duration.ofSeconds(n);
                  case "m" -> Duration.ofMinutes(n);
                  default -> Duration.ofHours(n);
                });
      } catch (NumberFormatException | ArithmeticException tooLong) {
        throw new CommandLine.TypeConversionException("'" + text + "' is too long a duration");
      }
      at = m.end();
    }
    return at == text.length() && !text.isEmpty() ? total : null;
  }

  /**
   * The inverse of {@link #parse}, in the largest unit that is exact: {@code 600ms}, {@code 1s},
   * {@code 1h}.
   */
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
