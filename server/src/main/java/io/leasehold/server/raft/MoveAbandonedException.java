package io.leasehold.server.raft;

/** A namespace move that ended without the namespace reaching its destination. */
public final class MoveAbandonedException extends RuntimeException {
  public MoveAbandonedException(String message) {
    super(message);
  }
}
