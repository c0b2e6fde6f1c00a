package io.leasehold.statemachine.store;

import java.util.Optional;

/** One put or delete, part of the atomic batch written for one applied log entry. */
public record Change(Space space, byte[] key, Optional<byte[]> value) {
  public static Change put(Space space, byte[] key, byte[] value) {
    return new Change(space, key, Optional.of(value));
  }

  public static Change delete(Space space, byte[] key) {
    return new Change(space, key, Optional.empty());
  }
}
