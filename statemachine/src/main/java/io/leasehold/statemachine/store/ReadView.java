package io.leasehold.statemachine.store;

import java.util.Optional;

/** A consistent, read-only view of a store: every read sees the state at {@link #applied()}. */
public interface ReadView {
  AppliedPosition applied();

  Optional<byte[]> get(Space space, byte[] key);

  /**
   * Visits, in unsigned byte order, the entries whose key starts with {@code prefix} and is
   * strictly greater than {@code after} (empty: no lower bound), until the visitor returns false.
   */
  void scan(Space space, byte[] prefix, byte[] after, EntryVisitor visitor);

  @FunctionalInterface
  interface EntryVisitor {
    /** @return false to stop the scan */
    boolean visit(byte[] key, byte[] value);
  }
}
