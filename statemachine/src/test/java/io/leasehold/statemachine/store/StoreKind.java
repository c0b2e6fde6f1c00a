package io.leasehold.statemachine.store;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/** The store implementations under test, for parameterized tests; plus small shared helpers. */
public enum StoreKind {
  IN_MEMORY {
    @Override
    public KvStore open(Path dir) {
      return new InMemoryStore();
    }
  },
  ROCKSDB {
    @Override
    public KvStore open(Path dir) throws IOException {
      return RocksDbStore.open(dir);
    }
  };

  /** Opens a fresh (or, for RocksDB, the existing) store in {@code dir}. */
  public abstract KvStore open(Path dir) throws IOException;

  /** The store's whole state in {@link SnapshotFormat}: equal bytes mean equal state. */
  public static byte[] dump(KvStore store) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      store.writeSnapshot(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  public static void load(KvStore store, byte[] snapshot) throws IOException {
    store.loadSnapshot(new ByteArrayInputStream(snapshot));
  }
}
