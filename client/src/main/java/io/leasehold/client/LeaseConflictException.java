package io.leasehold.client;

/**
 * A name that had to be free was held by another holder (for instance a service instance registered
 * by someone else).
 */
public class LeaseConflictException extends LeaseholdException {
  private static final long serialVersionUID = 1L;
  private final transient Conflict conflict;

  /**
   * {@code name} is held by the holder in {@code conflict}.
   *
   * @param name the lease's name, {@code namespace/rest}
   * @param conflict who holds the name
   */
  public LeaseConflictException(String name, Conflict conflict) {
    super(
        name
            + ": held by "
            + conflict.holder()
            + " (token "
            + conflict.token()
            + ", about "
            + conflict.remaining().toMillis()
            + " ms left)");
    this.conflict = conflict;
  }

  /**
   * Who holds the name.
   *
   * @return the holder, its lease's token and its time left
   */
  public Conflict conflict() {
    return conflict;
  }
}
