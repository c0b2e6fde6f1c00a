package io.leasehold.jepsen.checker;

import java.util.List;
import java.util.Objects;

/**
 * A checker's answer: VALID, INVALID with the offending operations explained, or UNKNOWN when it
 * could not decide (a search budget ran out, nothing to check).
 */
public record Verdict(String checker, Result result, String summary, List<String> problems) {
  public enum Result {
    VALID,
    INVALID,
    UNKNOWN
  }

  /** At most this many problems are kept: the first ones explain a failure; the rest is noise. */
  public static final int MAX_PROBLEMS = 20;

  public Verdict {
    Objects.requireNonNull(checker, "checker");
    Objects.requireNonNull(result, "result");
    Objects.requireNonNull(summary, "summary");
    problems = List.copyOf(problems.subList(0, Math.min(problems.size(), MAX_PROBLEMS)));
  }

  public static Verdict of(String checker, List<String> problems, String summary) {
    return new Verdict(
        checker, problems.isEmpty() ? Result.VALID : Result.INVALID, summary, problems);
  }

  public static Verdict unknown(String checker, String why) {
    return new Verdict(checker, Result.UNKNOWN, why, List.of());
  }

  public boolean failed() {
    return result == Result.INVALID;
  }

  @Override
  public String toString() {
    StringBuilder b =
        new StringBuilder(checker).append(": ").append(result).append(" — ").append(summary);
    problems.forEach(p -> b.append("\n    ").append(p));
    return b.toString();
  }
}
