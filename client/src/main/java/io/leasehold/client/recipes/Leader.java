package io.leasehold.client.recipes;

import java.util.Objects;
import java.util.Optional;

/**
 * Who leads an election now, as the cluster has it.
 *
 * @param holder the leading candidate's holder identity
 * @param token the fencing token of its leadership: larger for every later leader
 * @param value the value it campaigned with (stored as the lease's address), if any
 */
public record Leader(String holder, long token, Optional<String> value) {
  /**
   * Checks that every field is given.
   *
   * @param holder the leading candidate's holder identity
   * @param token the fencing token of its leadership
   * @param value the value it campaigned with, if any
   */
  public Leader {
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(value, "value");
  }
}
