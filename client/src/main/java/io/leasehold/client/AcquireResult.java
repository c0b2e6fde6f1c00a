package io.leasehold.client;

import io.leasehold.proto.v1.Outcome;
import java.util.Objects;
import java.util.Optional;

/**
 * The outcome of one acquisition attempt ({@link LeaseholdClient#tryAcquire}): a business outcome,
 * not an error.
 *
 * @param outcome   {@link Outcome#GRANTED}, {@link Outcome#CONFLICT} or {@link Outcome#REJECTED}
 * @param lease     the new lease, when granted
 * @param conflict  who holds the name, on conflict
 * @param rejection why policy refused, when rejected
 */
public record AcquireResult(Outcome outcome, Optional<Lease> lease, Optional<Conflict> conflict, Optional<Rejection> rejection) {
  public AcquireResult {
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(conflict, "conflict");
    Objects.requireNonNull(rejection, "rejection");
  }

  public static AcquireResult granted(Lease lease) {
    return new AcquireResult(Outcome.GRANTED, Optional.of(lease), Optional.empty(), Optional.empty());
  }

  public static AcquireResult conflict(Conflict conflict) {
    return new AcquireResult(Outcome.CONFLICT, Optional.empty(), Optional.of(conflict), Optional.empty());
  }

  public static AcquireResult rejected(Rejection rejection) {
    return new AcquireResult(Outcome.REJECTED, Optional.empty(), Optional.empty(), Optional.of(rejection));
  }

  public boolean isGranted() {
    return outcome == Outcome.GRANTED;
  }
}
