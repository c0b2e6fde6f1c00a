package io.leasehold.client;

import java.time.Duration;
import java.util.Optional;

/** The name did not become free within the acquisition's wait bound. */
public class AcquireTimeoutException extends LeaseholdException {
  private static final long serialVersionUID = 1L;
  private final transient Conflict lastConflict;

  /**
   * {@code name} did not become free within {@code waited}; {@code lastConflict} is the last holder
   * seen.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param waited how long it waited
   * @param lastConflict the last holder seen, if any
   */
  public AcquireTimeoutException(String name, Duration waited, Optional<Conflict> lastConflict) {
    super(
        name
            + ": not acquired within "
            + waited.toMillis()
            + " ms"
            + lastConflict
                .map(c -> "; held by " + c.holder() + " (token " + c.token() + ")")
                .orElse(""));
    this.lastConflict = lastConflict.orElse(null);
  }

  /**
   * The holder seen last, if an attempt saw one.
   *
   * @return the last holder seen, if any
   */
  public Optional<Conflict> lastConflict() {
    return Optional.ofNullable(lastConflict);
  }
}
