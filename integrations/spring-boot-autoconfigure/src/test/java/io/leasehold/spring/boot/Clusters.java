package io.leasehold.spring.boot;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** What this module's tests wait with. */
final class Clusters {
  private Clusters() {}

  /** Waits for {@code condition}, failing after {@code deadline}. */
  static void await(Duration deadline, String what, BooleanSupplier condition)
      throws InterruptedException {
    long end = System.nanoTime() + deadline.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("not within " + deadline + ": " + what);
      }
      Thread.sleep(20);
    }
  }
}
