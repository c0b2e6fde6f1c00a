package io.leasehold.statemachine.store;

import java.io.IOException;
import java.io.UncheckedIOException;
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

  /**
   * Visits every entry of {@code space} in unsigned key order, handing each out in buffers the view
   * may reuse for the next entry: only the first {@code keyLength} and {@code valueLength} bytes
   * are the entry's, and they are valid only during the call. A snapshot writes every stored entry;
   * {@link #scan} would give it two fresh arrays per entry.
   */
  default void dump(Space space, RawEntryVisitor visitor) throws IOException {
    try {
      scan(
          space,
          new byte[0],
          new byte[0],
          (key, value) -> {
            try {
              visitor.visit(key, key.length, value, value.length);
              return true;
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  @FunctionalInterface
  interface RawEntryVisitor {
    void visit(byte[] key, int keyLength, byte[] value, int valueLength) throws IOException;
  }

  @FunctionalInterface
  interface EntryVisitor {
    /**
     * @return false to stop the scan
     */
    boolean visit(byte[] key, byte[] value);
  }
}
