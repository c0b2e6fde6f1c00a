package io.leasehold.jepsen.history;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * After the last heal at {@code healedNanos}, an attempt to acquire the free name {@code name}:
 * granted at {@code grantedNanos}, or never within the attempt.
 */
public record LivenessProbe(
    String name, long healedNanos, OptionalLong grantedNanos, long boundNanos) {
  public LivenessProbe {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(grantedNanos, "grantedNanos");
  }
}
