package io.leasehold.client;

/**
 * {@link FencingGuard}: a write carried a fencing token lower than one the resource already
 * accepted.
 */
public class StaleTokenException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /** The guarded resource. */
  private final String resource;

  /** The refused token. */
  private final long token;

  /** The newest token the resource had accepted. */
  private final long highest;

  /**
   * {@code token} is lower than {@code highest}, the highest {@code resource} had accepted.
   *
   * @param resource the guarded resource
   * @param token the refused token
   * @param highest the highest token the resource had accepted
   */
  public StaleTokenException(String resource, long token, long highest) {
    super(
        resource
            + ": fencing token "
            + token
            + " is stale; the resource already accepted token "
            + highest);
    this.resource = resource;
    this.token = token;
    this.highest = highest;
  }

  /**
   * The guarded resource.
   *
   * @return the resource the write was for
   */
  public String resource() {
    return resource;
  }

  /**
   * The refused token.
   *
   * @return the token the write carried
   */
  public long token() {
    return token;
  }

  /**
   * The highest token the resource has accepted.
   *
   * @return the highest token the resource had accepted
   */
  public long highest() {
    return highest;
  }
}
