package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
  @Test
  void backoffGrowsByTheMultiplierUpToTheCapWithinTheJitter() {
    RetryPolicy p = new RetryPolicy(Duration.ofMillis(100), Duration.ofSeconds(1), 2.0, 0.2);
    assertEquals(Duration.ofMillis(80), p.backoff(1, 0.0));
    assertEquals(Duration.ofMillis(120), p.backoff(1, 1.0));
    assertEquals(Duration.ofMillis(200), p.backoff(2, 0.5));
    assertEquals(Duration.ofMillis(400), p.backoff(3, 0.5));
    assertEquals(Duration.ofSeconds(1), p.backoff(10, 0.5), "capped");
    assertEquals(Duration.ofMillis(1200), p.backoff(50, 1.0), "capped, then spread");
  }

  @Test
  void badPoliciesAreRefused() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new RetryPolicy(Duration.ZERO, Duration.ofSeconds(1), 2, 0.1));
    assertThrows(
        IllegalArgumentException.class,
        () -> new RetryPolicy(Duration.ofSeconds(2), Duration.ofSeconds(1), 2, 0.1));
    assertThrows(
        IllegalArgumentException.class,
        () -> new RetryPolicy(Duration.ofMillis(1), Duration.ofSeconds(1), 0.5, 0.1));
    assertThrows(
        IllegalArgumentException.class,
        () -> new RetryPolicy(Duration.ofMillis(1), Duration.ofSeconds(1), 2, 1.5));
  }
}
