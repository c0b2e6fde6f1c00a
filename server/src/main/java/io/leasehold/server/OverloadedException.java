package io.leasehold.server;

/**
 * More writes are waiting for the leader on this node than it admits; the client should back off
 * and retry.
 */
public final class OverloadedException extends RuntimeException {
  public OverloadedException(String message) {
    super(message);
  }
}
