package io.leasehold.statemachine.store;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;

/** A store in sorted maps, for tests and for reasoning about the core without RocksDB. */
public final class InMemoryStore implements KvStore {
  private final ReadWriteLock lock = new ReentrantReadWriteLock();
  private final Map<Space, NavigableMap<byte[], byte[]>> spaces = new EnumMap<>(Space.class);
  private final ReadView view = new MapView();

  public InMemoryStore() {
    for (Space s : Space.values()) {
      spaces.put(s, new TreeMap<>(Arrays::compareUnsigned));
    }
  }

  @Override
  public AppliedPosition applied() {
    return read(ReadView::applied);
  }

  @Override
  public Optional<byte[]> get(Space space, byte[] key) {
    return read(v -> v.get(space, key));
  }

  @Override
  public void commit(AppliedPosition position, List<Change> changes) {
    lock.writeLock().lock();
    try {
      for (Change c : changes) {
        NavigableMap<byte[], byte[]> m = spaces.get(c.space());
        if (c.value().isPresent()) {
          m.put(c.key().clone(), c.value().get().clone());
        } else {
          m.remove(c.key());
        }
      }
      spaces.get(Space.META).put(AppliedPosition.META_KEY, position.encode());
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public <T> T read(Function<ReadView, T> reader) {
    lock.readLock().lock();
    try {
      return reader.apply(view);
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public void loadSnapshot(InputStream in) throws IOException {
    Map<Space, NavigableMap<byte[], byte[]>> loaded = new EnumMap<>(Space.class);
    for (Space s : Space.values()) {
      loaded.put(s, new TreeMap<>(Arrays::compareUnsigned));
    }
    SnapshotFormat.read(in, (space, key, value) -> loaded.get(space).put(key, value));
    lock.writeLock().lock();
    try {
      spaces.putAll(loaded);
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public void close() {}

  private final class MapView implements ReadView {
    @Override
    public AppliedPosition applied() {
      byte[] raw = spaces.get(Space.META).get(AppliedPosition.META_KEY);
      return raw == null ? AppliedPosition.NONE : AppliedPosition.decode(raw);
    }

    @Override
    public Optional<byte[]> get(Space space, byte[] key) {
      // Copies, as RocksDB hands out: callers must not reach into the map.
      return Optional.ofNullable(spaces.get(space).get(key)).map(byte[]::clone);
    }

    @Override
    public void scan(Space space, byte[] prefix, byte[] after, EntryVisitor visitor) {
      NavigableMap<byte[], byte[]> m = spaces.get(space);
      byte[] from = Arrays.compareUnsigned(after, prefix) >= 0 ? after : prefix;
      boolean inclusive = from != after || after.length == 0;
      for (Map.Entry<byte[], byte[]> e : m.tailMap(from, inclusive).entrySet()) {
        if (!Keys.startsWith(e.getKey(), prefix)) {
          return;
        }
        if (!visitor.visit(e.getKey().clone(), e.getValue().clone())) {
          return;
        }
      }
    }
  }
}
