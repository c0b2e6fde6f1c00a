package io.leasehold.statemachine.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The storage the deterministic core writes to. One writer (the apply loop), many readers.
 *
 * <p>Every implementation passes {@code KvStoreContract}; the core cannot tell them apart, and the
 * snapshots they write are byte-for-byte the same for the same state.
 */
public interface KvStore extends AutoCloseable {

  /**
   * The position of the last entry committed with {@link #commit}, or {@link AppliedPosition#NONE}.
   */
  AppliedPosition applied();

  /** Reads the latest committed state (for the apply loop, which is the only writer). */
  Optional<byte[]> get(Space space, byte[] key);

  /**
   * Writes the changes of one log entry and its position atomically: after a crash either all of
   * them and the new position are there, or none is.
   */
  void commit(AppliedPosition position, List<Change> changes) throws IOException;

  /** Runs {@code reader} against one consistent view of the state. */
  <T> T read(Function<ReadView, T> reader);

  /** Writes the whole state, in {@link SnapshotFormat}. */
  default void writeSnapshot(OutputStream out) throws IOException {
    read(
        view -> {
          try {
            SnapshotFormat.write(view, out);
            return null;
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
  }

  /**
   * The store's own memory outside the Java heap, in bytes by kind, for the node's metrics; empty
   * when it keeps none. Safe to call from any thread; a closed store answers empty.
   */
  default Map<String, Long> memoryBytes() {
    return Map.of();
  }

  /** Replaces the whole state with a snapshot written by {@link #writeSnapshot}. */
  void loadSnapshot(InputStream in) throws IOException;

  @Override
  void close();
}
