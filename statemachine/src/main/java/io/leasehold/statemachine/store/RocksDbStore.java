package io.leasehold.statemachine.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.stream.Stream;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteBufferManager;
import org.rocksdb.WriteOptions;
import org.slf4j.LoggerFactory;

/**
 * The production store: one RocksDB column family per {@link Space}.
 *
 * <p>Durability comes from the Raft log, so writes go to RocksDB's WAL without fsync, and the WAL
 * buffer itself is written out by a background flush every {@value #WAL_FLUSH_MILLIS} ms rather
 * than on every commit (it was a third of the apply cost). After a crash RocksDB recovers a prefix
 * of whole batches; the applied position stored in the same batch tells Ratis's replay where to
 * resume, and a store that fell behind the latest snapshot is reloaded from it. The database
 * directory must not be inside Ratis's {@code sm/} directory, which snapshot installation replaces.
 */
public final class RocksDbStore implements KvStore {
  static {
    RocksDB.loadLibrary();
  }

  private final Path dir;

  /** Writers and readers share the handle; reloading a snapshot or closing swaps it exclusively. */
  private final ReadWriteLock handleLock = new ReentrantReadWriteLock();

  private final WriteOptions writeOptions = new WriteOptions();
  private final ScheduledExecutorService walFlusher;
  private Handle handle;

  static final long WAL_FLUSH_MILLIS = 20;

  /**
   * RocksDB's memory, every column family together: one block cache, which the memtables are
   * charged to as well. RocksDB's defaults give each of the sixteen column families its own 64 MB
   * memtables (two of them) and nothing bounds their sum: under a stream of new leases a node's
   * native memory grew by hundreds of megabytes on top of its heap, which already holds every live
   * lease.
   */
  static final long CACHE_BYTES = 96L << 20;

  /** The memtables' share of {@link #CACHE_BYTES}: past it, the largest is flushed. */
  static final long MEMTABLE_BYTES = 48L << 20;

  /** One column family's memtable before it is flushed. */
  static final long WRITE_BUFFER_BYTES = 8L << 20;

  /**
   * RocksDB's memory budget: one block cache, which the memtables are charged to as well, for every
   * store that shares it. A node's stores (the meta group's and each lease group's) share one, so
   * its native memory does not grow with the number of groups. Counted: each store holds a
   * reference while open and its creator one until {@link #release}; the last release frees it.
   */
  public static final class Memory {
    static {
      // LRUCache, unlike RocksDB's options classes, does not load the native library itself.
      RocksDB.loadLibrary();
    }

    private final LRUCache cache = new LRUCache(CACHE_BYTES);
    private final WriteBufferManager memtables = new WriteBufferManager(MEMTABLE_BYTES, cache);
    private int references = 1;

    private Memory() {}

    /** A budget of its own, held by the caller until it calls {@link #release}. */
    public static Memory create() {
      return new Memory();
    }

    private synchronized Memory retain() {
      if (references == 0) {
        throw new IllegalStateException("RocksDB's memory budget was released");
      }
      references++;
      return this;
    }

    /** Gives up one reference; the last frees the cache. */
    public synchronized void release() {
      if (references > 0 && --references == 0) {
        memtables.close();
        cache.close();
      }
    }
  }

  private final Memory memory;

  /** Guarded by the handle lock's write lock: whether close gave up this store's reference. */
  private boolean memoryReleased;

  private RocksDbStore(Path dir, Memory memory) throws IOException {
    this.dir = dir;
    this.memory = memory;
    this.handle = Handle.open(dir, memory);
    this.walFlusher =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "leasehold-wal-flush");
              t.setDaemon(true);
              return t;
            });
    walFlusher.scheduleWithFixedDelay(
        this::flushWal, WAL_FLUSH_MILLIS, WAL_FLUSH_MILLIS, TimeUnit.MILLISECONDS);
  }

  private void flushWal() {
    handleLock.readLock().lock();
    try {
      if (handle != null) {
        handle.db.flushWal(false);
      }
    } catch (RocksDBException e) {
      // The next commit or flush reports a failing disk; the Raft log still has the entries.
      LoggerFactory.getLogger(RocksDbStore.class)
          .warn("flushing the RocksDB WAL in {}: {}", dir, e.getMessage());
    } finally {
      handleLock.readLock().unlock();
    }
  }

  /** Opens (creating if needed) the database in {@code dir}, with a memory budget of its own. */
  public static RocksDbStore open(Path dir) throws IOException {
    Memory own = Memory.create();
    try {
      return open(dir, own);
    } finally {
      own.release(); // the store holds its own reference
    }
  }

  /** Opens (creating if needed) the database in {@code dir}, within a shared memory budget. */
  public static RocksDbStore open(Path dir, Memory memory) throws IOException {
    Files.createDirectories(dir);
    memory.retain();
    try {
      return new RocksDbStore(dir, memory);
    } catch (IOException | RuntimeException e) {
      memory.release();
      throw e;
    }
  }

  /**
   * RocksDB's native memory: memtables and table readers summed over the column families, and the
   * block cache, which the column families share (they are opened with one set of options).
   */
  @Override
  public Map<String, Long> memoryBytes() {
    handleLock.readLock().lock();
    try {
      if (handle == null) {
        return Map.of();
      }
      Map<String, Long> bytes = new LinkedHashMap<>();
      bytes.put(
          "memtables", handle.db.getAggregatedLongProperty("rocksdb.cur-size-all-mem-tables"));
      bytes.put(
          "table_readers",
          handle.db.getAggregatedLongProperty("rocksdb.estimate-table-readers-mem"));
      bytes.put("block_cache", handle.db.getLongProperty("rocksdb.block-cache-usage"));
      return bytes;
    } catch (RocksDBException e) {
      return Map.of();
    } finally {
      handleLock.readLock().unlock();
    }
  }

  @Override
  public AppliedPosition applied() {
    return get(Space.META, AppliedPosition.META_KEY)
        .map(AppliedPosition::decode)
        .orElse(AppliedPosition.NONE);
  }

  @Override
  public Optional<byte[]> get(Space space, byte[] key) {
    handleLock.readLock().lock();
    try {
      Handle h = live();
      return Optional.ofNullable(h.db.get(h.cf(space), key));
    } catch (RocksDBException e) {
      throw new StoreException("read " + space + " from " + dir, e);
    } finally {
      handleLock.readLock().unlock();
    }
  }

  @Override
  public void commit(AppliedPosition position, List<Change> changes) throws IOException {
    handleLock.readLock().lock();
    try {
      Handle h = live();
      byte[] meta = position.encode();
      int metaCf = h.cfId(Space.META);
      int capacity =
          WriteBatchEncoder.HEADER
              + WriteBatchEncoder.putSize(metaCf, AppliedPosition.META_KEY.length, meta.length);
      for (Change c : changes) {
        capacity += WriteBatchEncoder.size(h.cfId(c.space()), c);
      }
      WriteBatchEncoder encoder = new WriteBatchEncoder(capacity);
      for (Change c : changes) {
        encoder.add(h.cfId(c.space()), c);
      }
      encoder.put(metaCf, AppliedPosition.META_KEY, meta);
      try (WriteBatch batch = new WriteBatch(encoder.toByteArray())) {
        h.db.write(writeOptions, batch);
      }
    } catch (RocksDBException e) {
      throw new IOException("write batch at index " + position.index() + " to " + dir, e);
    } finally {
      handleLock.readLock().unlock();
    }
  }

  @Override
  public <T> T read(Function<ReadView, T> reader) {
    handleLock.readLock().lock();
    try {
      Handle h = live();
      Snapshot snapshot = h.db.getSnapshot();
      try (ReadOptions options = new ReadOptions().setSnapshot(snapshot)) {
        return reader.apply(new SnapshotView(h, options));
      } finally {
        h.db.releaseSnapshot(snapshot);
      }
    } finally {
      handleLock.readLock().unlock();
    }
  }

  @Override
  public void loadSnapshot(InputStream in) throws IOException {
    // Load into a fresh database beside the live one, then swap: a corrupt snapshot leaves the
    // live state untouched.
    Path incoming = dir.resolveSibling(dir.getFileName() + ".incoming");
    deleteRecursively(incoming);
    Handle fresh = Handle.open(incoming, memory);
    try {
      List<Change> pending = new ArrayList<>();
      SnapshotFormat.read(
          in,
          (space, key, value) -> {
            pending.add(Change.put(space, key, value));
            if (pending.size() >= 10_000) {
              fresh.writeAll(pending, writeOptions);
              pending.clear();
            }
          });
      fresh.writeAll(pending, writeOptions);
      fresh.db.flushWal(true);
    } catch (IOException | RuntimeException e) {
      fresh.close();
      deleteRecursively(incoming);
      throw e;
    } catch (RocksDBException e) {
      fresh.close();
      deleteRecursively(incoming);
      throw new IOException("load snapshot into " + incoming, e);
    }
    fresh.close();
    handleLock.writeLock().lock();
    try {
      live().close();
      handle = null;
      deleteRecursively(dir);
      Files.move(incoming, dir);
      handle = Handle.open(dir, memory);
    } finally {
      handleLock.writeLock().unlock();
    }
  }

  @Override
  public void close() {
    walFlusher.shutdownNow();
    handleLock.writeLock().lock();
    try {
      if (handle != null) {
        try {
          handle.db.flushWal(true);
        } catch (RocksDBException e) {
          LoggerFactory.getLogger(RocksDbStore.class)
              .warn("final WAL flush in {}: {}", dir, e.getMessage());
        }
        handle.close();
        handle = null;
      }
      if (!memoryReleased) {
        memoryReleased = true;
        memory.release();
      }
      writeOptions.close();
    } finally {
      handleLock.writeLock().unlock();
    }
  }

  /**
   * Writes every memtable out and waits, up to {@code timeout}, until no flush or compaction runs
   * or is pending. A node never needs this; a benchmark that compares short phases does: a memtable
   * flush and the compaction after it took up to 0.4 of two cores for several seconds, in whichever
   * phase they fell. Settled first, a phase of a few seconds starts with an empty memtable and
   * carries only the background work its own writes cause.
   *
   * @return whether the store was quiet before the timeout
   */
  public boolean settle(Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    handleLock.readLock().lock();
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      Handle h = live();
      h.db.flush(flush, h.handles);
    } catch (RocksDBException e) {
      throw new IOException("flush the memtables of " + dir, e);
    } finally {
      handleLock.readLock().unlock();
    }
    while (busy()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(10);
    }
    return true;
  }

  /** A RocksDB integer property of one space's column family (tests). */
  long property(Space space, String name) throws RocksDBException {
    handleLock.readLock().lock();
    try {
      Handle h = live();
      return h.db.getLongProperty(h.cf(space), name);
    } finally {
      handleLock.readLock().unlock();
    }
  }

  /** Whether a flush or compaction runs or waits to run. */
  private boolean busy() throws IOException {
    handleLock.readLock().lock();
    try {
      Handle h = live();
      if (h.db.getLongProperty("rocksdb.num-running-flushes") > 0
          || h.db.getLongProperty("rocksdb.num-running-compactions") > 0) {
        return true;
      }
      for (ColumnFamilyHandle cf : h.handles) {
        if (h.db.getLongProperty(cf, "rocksdb.mem-table-flush-pending") > 0
            || h.db.getLongProperty(cf, "rocksdb.compaction-pending") > 0) {
          return true;
        }
      }
      return false;
    } catch (RocksDBException e) {
      throw new IOException("read the background work of " + dir, e);
    } finally {
      handleLock.readLock().unlock();
    }
  }

  private Handle live() {
    if (handle == null) {
      throw new StoreException("store " + dir + " is closed", null);
    }
    return handle;
  }

  /** Deletes a store's directory (or any tree), if it exists. */
  public static void deleteRecursively(Path path) throws IOException {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(path)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  /** An open database with its column family handles. */
  private static final class Handle {
    final RocksDB db;
    final DBOptions options;
    final ColumnFamilyOptions cfOptions;
    final List<ColumnFamilyHandle> handles;
    final Map<Space, ColumnFamilyHandle> bySpace = new EnumMap<>(Space.class);

    /** Column family ids by space ordinal: getID() is a JNI call, too dear once per put. */
    final int[] ids;

    private Handle(
        RocksDB db,
        DBOptions options,
        ColumnFamilyOptions cfOptions,
        List<ColumnFamilyHandle> handles) {
      this.db = db;
      this.options = options;
      this.cfOptions = cfOptions;
      this.handles = handles;
      Space[] spaces = Space.values();
      this.ids = new int[spaces.length];
      for (int i = 0; i < spaces.length; i++) {
        bySpace.put(spaces[i], handles.get(i + 1));
        ids[spaces[i].ordinal()] = handles.get(i + 1).getID();
      }
    }

    static Handle open(Path dir, Memory memory) throws IOException {
      LRUCache cache = memory.cache;
      WriteBufferManager memtables = memory.memtables;
      DBOptions options =
          new DBOptions()
              .setCreateIfMissing(true)
              .setCreateMissingColumnFamilies(true)
              .setManualWalFlush(true)
              .setMaxBackgroundJobs(2)
              .setWriteBufferManager(memtables);
      ColumnFamilyOptions cfOptions =
          new ColumnFamilyOptions()
              .setWriteBufferSize(WRITE_BUFFER_BYTES)
              .setTableFormatConfig(
                  new BlockBasedTableConfig()
                      .setBlockCache(cache)
                      .setCacheIndexAndFilterBlocks(true));
      List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
      descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfOptions));
      for (Space s : Space.values()) {
        descriptors.add(
            new ColumnFamilyDescriptor(
                s.columnFamily().getBytes(StandardCharsets.UTF_8), cfOptions));
      }
      List<ColumnFamilyHandle> handles = new ArrayList<>();
      try {
        Files.createDirectories(dir);
        RocksDB db = RocksDB.open(options, dir.toString(), descriptors, handles);
        return new Handle(db, options, cfOptions, handles);
      } catch (RocksDBException e) {
        options.close();
        cfOptions.close();
        throw new IOException("open RocksDB at " + dir + ": " + e.getMessage(), e);
      }
    }

    ColumnFamilyHandle cf(Space space) {
      return bySpace.get(space);
    }

    int cfId(Space space) {
      return ids[space.ordinal()];
    }

    void writeAll(List<Change> changes, WriteOptions writeOptions) throws IOException {
      try (WriteBatch batch = new WriteBatch()) {
        for (Change c : changes) {
          batch.put(cf(c.space()), c.key(), c.value().orElseThrow());
        }
        db.write(writeOptions, batch);
      } catch (RocksDBException e) {
        throw new IOException("write snapshot entries", e);
      }
    }

    void close() {
      handles.forEach(ColumnFamilyHandle::close);
      db.close();
      options.close();
      cfOptions.close();
    }
  }

  private static final class SnapshotView implements ReadView {
    private final Handle h;
    private final ReadOptions options;

    SnapshotView(Handle h, ReadOptions options) {
      this.h = h;
      this.options = options;
    }

    @Override
    public AppliedPosition applied() {
      return get(Space.META, AppliedPosition.META_KEY)
          .map(AppliedPosition::decode)
          .orElse(AppliedPosition.NONE);
    }

    @Override
    public Optional<byte[]> get(Space space, byte[] key) {
      try {
        return Optional.ofNullable(h.db.get(h.cf(space), options, key));
      } catch (RocksDBException e) {
        throw new StoreException("read " + space, e);
      }
    }

    @Override
    public void dump(Space space, RawEntryVisitor visitor) throws IOException {
      byte[] key = new byte[256];
      byte[] value = new byte[4096];
      try (RocksIterator it = h.db.newIterator(h.cf(space), options)) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          // key(byte[]) copies what fits and returns the whole length: grow and copy again if
          // short.
          int keyLength = it.key(key);
          if (keyLength > key.length) {
            key = new byte[Math.max(keyLength, key.length * 2)];
            it.key(key);
          }
          int valueLength = it.value(value);
          if (valueLength > value.length) {
            value = new byte[Math.max(valueLength, value.length * 2)];
            it.value(value);
          }
          visitor.visit(key, keyLength, value, valueLength);
        }
        endedCleanly(it, "dump " + space);
      }
    }

    @Override
    public void scan(Space space, byte[] prefix, byte[] after, EntryVisitor visitor) {
      try (RocksIterator it = h.db.newIterator(h.cf(space), options)) {
        boolean afterWins = Arrays.compareUnsigned(after, prefix) >= 0 && after.length > 0;
        it.seek(afterWins ? after : prefix);
        if (afterWins && it.isValid() && Arrays.equals(it.key(), after)) {
          it.next();
        }
        for (; it.isValid(); it.next()) {
          byte[] key = it.key();
          if (!Keys.startsWith(key, prefix)) {
            return;
          }
          if (!visitor.visit(key, it.value())) {
            return;
          }
        }
        endedCleanly(it, "scan " + space);
      }
    }

    /**
     * An iterator also stops being valid on an I/O or corruption error; only its status tells that
     * from the end of the data, and a read that took one for the other would look complete.
     */
    private static void endedCleanly(RocksIterator it, String what) {
      try {
        it.status();
      } catch (RocksDBException e) {
        throw new StoreException(what, e);
      }
    }
  }
}
