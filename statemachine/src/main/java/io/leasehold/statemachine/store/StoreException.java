package io.leasehold.statemachine.store;

/** A storage fault that a reader cannot recover from (the disk, not the input). */
public final class StoreException extends RuntimeException {
  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
