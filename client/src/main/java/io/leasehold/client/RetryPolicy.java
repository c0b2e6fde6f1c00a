package io.leasehold.client;

import java.time.Duration;
import java.util.Objects;

/**
 * Backoff between retries of a request that failed for a reason that may pass (node down, no
 * leader, overload): exponential from {@code initialBackoff} by {@code multiplier}, capped at
 * {@code maxBackoff}, each delay spread by ±{@code jitter} (a fraction) so clients that failed
 * together do not retry together. Retries stop at the client's request timeout.
 *
 * @param initialBackoff the first delay
 * @param maxBackoff the largest delay
 * @param multiplier growth per retry, at least 1
 * @param jitter the random spread of each delay, between 0 and 1
 */
public record RetryPolicy(
    Duration initialBackoff, Duration maxBackoff, double multiplier, double jitter) {
  /** 50 ms doubling to 2 s, ±20%. */
  public static final RetryPolicy DEFAULT =
      new RetryPolicy(Duration.ofMillis(50), Duration.ofSeconds(2), 2.0, 0.2);

  /**
   * Checks the bounds.
   *
   * @param initialBackoff the first delay
   * @param maxBackoff the largest delay
   * @param multiplier growth per retry, at least 1
   * @param jitter the random spread of each delay, between 0 and 1
   */
  public RetryPolicy {
    Objects.requireNonNull(initialBackoff, "initialBackoff");
    Objects.requireNonNull(maxBackoff, "maxBackoff");
    if (initialBackoff.isNegative() || initialBackoff.isZero()) {
      throw new IllegalArgumentException("initialBackoff: must be positive, got " + initialBackoff);
    }
    if (maxBackoff.compareTo(initialBackoff) < 0) {
      throw new IllegalArgumentException(
          "maxBackoff: must be at least initialBackoff ("
              + initialBackoff
              + "), got "
              + maxBackoff);
    }
    if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
      throw new IllegalArgumentException("multiplier: must be at least 1, got " + multiplier);
    }
    if (!(jitter >= 0.0 && jitter <= 1.0)) {
      throw new IllegalArgumentException("jitter: must be between 0 and 1, got " + jitter);
    }
  }

  /**
   * The delay before retry number {@code retry} (1 for the first), given a uniform random number
   * {@code random} in [0, 1).
   *
   * @param retry the retry's number, from 1
   * @param random a uniform random number in [0, 1)
   * @return the delay before the retry
   */
  public Duration backoff(int retry, double random) {
    double base = initialBackoff.toNanos() * Math.pow(multiplier, Math.max(0, retry - 1));
    double capped = Math.min(base, maxBackoff.toNanos());
    double spread = capped * (1 - jitter + 2 * jitter * random);
    return Duration.ofNanos(Math.max(1, (long) spread));
  }
}
