package io.leasehold.client;

import java.time.Duration;
import java.util.Objects;

/**
 * Another holder has the name.
 *
 * @param holder    who holds it (this client's own holder if another handle of this client has it)
 * @param token     the fencing token of that lease
 * @param remaining an estimate of its time left, from leader-stamped times
 */
public record Conflict(String holder, long token, Duration remaining) {
  public Conflict {
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(remaining, "remaining");
  }
}
