package io.leasehold.jepsen.run;

import java.time.Duration;

/**
 * Sleeps that pace a workload or hold a fault for its scheduled time: these are the schedule's
 * durations, not waits for a condition (those poll with a deadline).
 */
public final class Pacing {
  private Pacing() {}

  public static void sleep(Duration d) {
    try {
      Thread.sleep(Math.max(0, d.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
