package io.leasehold.client;

import java.time.Duration;
import java.util.Objects;

/**
 * Another holder has the name: an {@link AcquireResult} case, and what {@link
 * LeaseConflictException} carries.
 *
 * @param holder who holds it (this client's own holder if another handle of this client has it)
 * @param token the fencing token of that lease
 * @param remaining an estimate of its time left, from leader-stamped times
 */
public record Conflict(String holder, long token, Duration remaining) implements AcquireResult {
  /**
   * Checks that the holder and remaining time are given.
   *
   * @param holder who holds it (this client's own holder if another handle of this client has it)
   * @param token the fencing token of that lease
   * @param remaining an estimate of its time left, from leader-stamped times
   */
  public Conflict {
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(remaining, "remaining");
  }
}
