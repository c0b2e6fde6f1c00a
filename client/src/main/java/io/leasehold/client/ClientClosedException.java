package io.leasehold.client;

/**
 * The {@link LeaseholdClient} was closed: it takes no new requests, and pending ones fail with
 * this.
 */
public class ClientClosedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /**
   * The client was closed before or during the call.
   *
   * @param message what went wrong
   */
  public ClientClosedException(String message) {
    super(message);
  }
}
