package io.leasehold.client;

/** The {@link LeaseholdClient} was closed: it takes no new requests, and pending ones fail with this. */
public class ClientClosedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public ClientClosedException(String message) {
    super(message);
  }
}
