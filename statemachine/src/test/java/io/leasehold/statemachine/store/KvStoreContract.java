package io.leasehold.statemachine.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the core relies on from a {@link KvStore}; every implementation passes all of it. */
public abstract class KvStoreContract {
  @TempDir protected Path tempDir;

  protected KvStore store;

  /** A fresh, empty store living in (or under) {@code tempDir}. */
  protected abstract KvStore newStore(Path tempDir) throws IOException;

  @BeforeEach
  void open() throws IOException {
    store = newStore(tempDir);
  }

  @AfterEach
  void close() {
    if (store != null) {
      store.close();
    }
  }

  protected static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  protected static byte[] bytes(int... values) {
    byte[] out = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = (byte) values[i];
    }
    return out;
  }

  protected static String hex(byte[] key) {
    return HexFormat.of().formatHex(key);
  }

  protected static List<String> scan(ReadView view, Space space, byte[] prefix, byte[] after) {
    List<String> keys = new ArrayList<>();
    view.scan(space, prefix, after, (k, v) -> keys.add(hex(k)) || true);
    return keys;
  }

  protected List<String> scan(Space space, byte[] prefix, byte[] after) {
    return store.read(v -> scan(v, space, prefix, after));
  }

  @Test
  void freshStoreIsEmptyAtPositionNone() {
    assertEquals(AppliedPosition.NONE, store.applied());
    assertEquals(AppliedPosition.NONE, store.read(ReadView::applied));
    assertTrue(store.get(Space.LEASES, b("lock/a")).isEmpty());
    assertEquals(List.of(), scan(Space.LEASES, new byte[0], new byte[0]));
  }

  @Test
  void commitWritesChangesTogetherWithItsPosition() throws IOException {
    store.commit(
        new AppliedPosition(1, 5),
        List.of(
            Change.put(Space.LEASES, b("lock/a"), b("A")),
            Change.put(Space.LEASES, b("lock/b"), b("B")),
            Change.put(Space.META, b("clock"), b("T"))));
    assertEquals(new AppliedPosition(1, 5), store.applied());
    assertArrayEquals(b("A"), store.get(Space.LEASES, b("lock/a")).orElseThrow());
    assertArrayEquals(b("T"), store.get(Space.META, b("clock")).orElseThrow());
    store.read(
        v -> {
          assertEquals(new AppliedPosition(1, 5), v.applied());
          assertArrayEquals(b("B"), v.get(Space.LEASES, b("lock/b")).orElseThrow());
          return null;
        });

    // Deletes, overwrites, and an entry that changes nothing but its position.
    store.commit(
        new AppliedPosition(2, 6),
        List.of(
            Change.delete(Space.LEASES, b("lock/a")),
            Change.put(Space.LEASES, b("lock/b"), b("B2")),
            Change.delete(Space.LEASES, b("lock/never-there"))));
    assertEquals(new AppliedPosition(2, 6), store.applied());
    assertTrue(store.get(Space.LEASES, b("lock/a")).isEmpty());
    assertArrayEquals(b("B2"), store.get(Space.LEASES, b("lock/b")).orElseThrow());
    store.commit(new AppliedPosition(2, 7), List.of());
    assertEquals(new AppliedPosition(2, 7), store.applied());
    assertEquals(List.of(hex(b("lock/b"))), scan(Space.LEASES, new byte[0], new byte[0]));
  }

  @Test
  void spacesAreSeparate() throws IOException {
    store.commit(
        new AppliedPosition(1, 1),
        List.of(
            Change.put(Space.LEASES, b("k"), b("lease")),
            Change.put(Space.META, b("k"), b("meta"))));
    assertArrayEquals(b("lease"), store.get(Space.LEASES, b("k")).orElseThrow());
    assertArrayEquals(b("meta"), store.get(Space.META, b("k")).orElseThrow());
    assertEquals(List.of(hex(b("k"))), scan(Space.LEASES, new byte[0], new byte[0]));
    // META also holds the applied position.
    List<String> meta = scan(Space.META, new byte[0], new byte[0]);
    assertTrue(
        meta.contains(hex(b("k"))) && meta.contains(hex(AppliedPosition.META_KEY)),
        meta.toString());
  }

  @Test
  void committedBytesAreCopiedNotShared() throws IOException {
    byte[] key = b("lock/a");
    byte[] value = b("value");
    store.commit(new AppliedPosition(1, 1), List.of(Change.put(Space.LEASES, key, value)));
    key[0] = 'X';
    value[0] = 'X';
    assertArrayEquals(b("value"), store.get(Space.LEASES, b("lock/a")).orElseThrow());
    assertTrue(store.get(Space.LEASES, key).isEmpty());
  }

  @Test
  void scanOrderIsUnsignedByteOrder() throws IOException {
    byte[][] keys = {
      bytes(0xff),
      bytes(0x80),
      bytes(0x7f),
      bytes(0x00),
      bytes(0x01),
      bytes(0x80, 0x00),
      bytes(0x7f, 0xff),
      bytes(0xc3, 0xbc),
      bytes(0x61),
      bytes(0x61, 0x00),
      bytes(0x61, 0xff),
      bytes(0xfe, 0xff, 0xff),
      bytes(0xff, 0x00)
    };
    List<Change> changes = new ArrayList<>();
    for (byte[] k : keys) {
      changes.add(Change.put(Space.LEASES, k, k));
    }
    store.commit(new AppliedPosition(1, 1), changes);
    List<String> expected =
        List.of(
            "00", "01", "61", "6100", "61ff", "7f", "7fff", "80", "8000", "c3bc", "feffff", "ff",
            "ff00");
    assertEquals(expected, scan(Space.LEASES, new byte[0], new byte[0]));
    List<String> values = new ArrayList<>();
    store.read(
        v -> {
          v.scan(Space.LEASES, new byte[0], new byte[0], (k, val) -> values.add(hex(val)) || true);
          return null;
        });
    assertEquals(expected, values, "each key comes with its own value");
  }

  @Test
  void scanHonoursPrefixAfterAndStop() throws IOException {
    List<Change> changes = new ArrayList<>();
    for (String k : List.of("a/b", "a/b/1", "a/b/2", "a/b0", "a/c", "ab", "b/x")) {
      changes.add(Change.put(Space.LEASES, b(k), b(k)));
    }
    changes.add(Change.put(Space.LEASES, bytes('a', '/', 0xff), bytes(1)));
    changes.add(Change.put(Space.LEASES, bytes('a', '/', 0xff, 0x00), bytes(1)));
    store.commit(new AppliedPosition(1, 1), changes);

    assertEquals(names("a/b", "a/b/1", "a/b/2", "a/b0"), scan(Space.LEASES, b("a/b"), new byte[0]));
    assertEquals(names("a/b/1", "a/b/2"), scan(Space.LEASES, b("a/b/"), new byte[0]));
    // "after" is exclusive, need not exist, and may lie before the prefix.
    assertEquals(names("a/b/2"), scan(Space.LEASES, b("a/b/"), b("a/b/1")));
    assertEquals(names("a/b/2"), scan(Space.LEASES, b("a/b/"), b("a/b/10")));
    assertEquals(names("a/b/1", "a/b/2"), scan(Space.LEASES, b("a/b/"), b("a/a")));
    assertEquals(names("a/b/1", "a/b/2"), scan(Space.LEASES, b("a/b/"), b("a/b/")));
    assertEquals(names(), scan(Space.LEASES, b("a/b/"), b("a/b/2")));
    assertEquals(names(), scan(Space.LEASES, b("a/b/"), b("z")));
    assertEquals(
        List.of(hex(b("a/c")), "612fff", "612fff00", hex(b("ab")), hex(b("b/x"))),
        scan(Space.LEASES, new byte[0], b("a/b0")));
    assertEquals(names(), scan(Space.LEASES, b("zz"), new byte[0]));
    // Prefixes with high bytes.
    assertEquals(
        List.of("612fff", "612fff00"), scan(Space.LEASES, bytes('a', '/', 0xff), new byte[0]));
    assertEquals(
        List.of("612fff00"), scan(Space.LEASES, bytes('a', '/', 0xff), bytes('a', '/', 0xff)));
    assertEquals(List.of("612fff", "612fff00"), scan(Space.LEASES, b("a/"), b("a/c")));

    // The visitor stops the scan.
    List<String> firstTwo = new ArrayList<>();
    store.read(
        v -> {
          v.scan(
              Space.LEASES,
              new byte[0],
              new byte[0],
              (k, val) -> {
                firstTwo.add(new String(k, StandardCharsets.UTF_8));
                return firstTwo.size() < 2;
              });
          return null;
        });
    assertEquals(List.of("a/b", "a/b/1"), firstTwo);
  }

  private static List<String> names(String... keys) {
    return Arrays.stream(keys).map(k -> hex(b(k))).collect(Collectors.toList());
  }

  /** A scan must agree with a reference model over random keys, prefixes and bounds. */
  @Test
  void scanAgreesWithSortedModel() throws IOException {
    Random rnd = new Random(99);
    int[] alphabet = {0x00, 0x2f, 0x61, 0x7f, 0x80, 0xc3, 0xff};
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    List<Change> changes = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      byte[] k = randomKey(rnd, alphabet, 1 + rnd.nextInt(4));
      model.put(k, k);
      changes.add(Change.put(Space.LEASES, k, k));
    }
    store.commit(new AppliedPosition(1, 1), changes);
    for (int i = 0; i < 300; i++) {
      byte[] prefix = randomKey(rnd, alphabet, rnd.nextInt(3));
      byte[] after =
          rnd.nextInt(3) == 0 ? new byte[0] : randomKey(rnd, alphabet, 1 + rnd.nextInt(4));
      List<String> expected =
          model.keySet().stream()
              .filter(k -> Keys.startsWith(k, prefix))
              .filter(k -> after.length == 0 || Arrays.compareUnsigned(k, after) > 0)
              .map(KvStoreContract::hex)
              .collect(Collectors.toList());
      assertEquals(
          expected,
          scan(Space.LEASES, prefix, after),
          "prefix " + hex(prefix) + " after " + hex(after));
    }
  }

  private static byte[] randomKey(Random rnd, int[] alphabet, int length) {
    byte[] k = new byte[length];
    for (int i = 0; i < length; i++) {
      k[i] = (byte) alphabet[rnd.nextInt(alphabet.length)];
    }
    return k;
  }

  @Test
  void readViewIsConsistentWhileCommitsHappen() throws Exception {
    int keys = 8;
    int commits = 400;
    AtomicReference<Throwable> writerFailure = new AtomicReference<>();
    Thread writer =
        new Thread(
            () -> {
              try {
                for (long i = 1; i <= commits; i++) {
                  byte[] value = ByteBuffer.allocate(8).putLong(i).array();
                  List<Change> changes = new ArrayList<>();
                  for (int k = 0; k < keys; k++) {
                    changes.add(Change.put(Space.LEASES, b("k/" + k), value));
                  }
                  // Keys come and go too: "odd/x" exists exactly at odd positions.
                  changes.add(
                      i % 2 == 1
                          ? Change.put(Space.LEASES, b("odd/x"), value)
                          : Change.delete(Space.LEASES, b("odd/x")));
                  store.commit(new AppliedPosition(1, i), changes);
                }
              } catch (Throwable t) {
                writerFailure.set(t);
              }
            },
            "kvstore-contract-writer");
    writer.start();
    int views = 0;
    long deadline = System.nanoTime() + 20_000_000_000L;
    long lastSeen = 0;
    while (writer.isAlive() || views == 0) {
      assertTrue(System.nanoTime() < deadline, "writer did not finish in time");
      long seen =
          store.read(
              v -> {
                long position = v.applied().index();
                // Every read in the view, point or scan, sees the state at that same position.
                for (int k = 0; k < keys; k++) {
                  Optional<byte[]> value = v.get(Space.LEASES, b("k/" + k));
                  if (position == 0) {
                    assertTrue(value.isEmpty());
                  } else {
                    assertEquals(
                        position, ByteBuffer.wrap(value.orElseThrow()).getLong(), "key " + k);
                  }
                }
                List<Long> scanned = new ArrayList<>();
                v.scan(
                    Space.LEASES,
                    b("k/"),
                    new byte[0],
                    (key, value) -> scanned.add(ByteBuffer.wrap(value).getLong()));
                assertEquals(position == 0 ? 0 : keys, scanned.size());
                scanned.forEach(x -> assertEquals(position, x));
                assertEquals(position % 2 == 1, v.get(Space.LEASES, b("odd/x")).isPresent());
                assertEquals(
                    position, v.applied().index(), "the position does not move within a view");
                return position;
              });
      assertTrue(seen >= lastSeen, "views go forward: " + seen + " after " + lastSeen);
      lastSeen = seen;
      views++;
    }
    writer.join();
    assertNull(writerFailure.get());
    assertEquals(new AppliedPosition(1, commits), store.applied());
  }

  @Test
  void snapshotRoundTripRestoresStateAndReplacesWhatWasThere() throws IOException {
    store.commit(
        new AppliedPosition(3, 10),
        List.of(
            Change.put(Space.LEASES, b("lock/a"), b("A")),
            Change.put(Space.LEASES, bytes(0xff, 0x01), new byte[0]),
            Change.put(Space.META, b("clock"), bytes(1, 2, 3))));
    byte[] snapshot = StoreKind.dump(store);

    store.commit(
        new AppliedPosition(4, 11),
        List.of(
            Change.delete(Space.LEASES, b("lock/a")),
            Change.put(Space.LEASES, b("lock/new"), b("N"))));
    StoreKind.load(store, snapshot);

    assertEquals(new AppliedPosition(3, 10), store.applied());
    assertArrayEquals(b("A"), store.get(Space.LEASES, b("lock/a")).orElseThrow());
    assertArrayEquals(
        new byte[0],
        store.get(Space.LEASES, bytes(0xff, 0x01)).orElseThrow(),
        "an empty value survives");
    assertTrue(
        store.get(Space.LEASES, b("lock/new")).isEmpty(), "a load replaces, it does not merge");
    assertArrayEquals(snapshot, StoreKind.dump(store));

    // The store keeps working after a load.
    store.commit(
        new AppliedPosition(4, 11), List.of(Change.put(Space.LEASES, b("lock/c"), b("C"))));
    assertEquals(new AppliedPosition(4, 11), store.applied());
    assertEquals(3, scan(Space.LEASES, new byte[0], new byte[0]).size());
  }

  /**
   * An entry as its sizes and a checksum of its bytes: comparable, and short in a failure message.
   */
  private static String digest(byte[] key, byte[] value) {
    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
    crc.update(key);
    crc.update(value);
    return key.length + "/" + value.length + "/" + Long.toHexString(crc.getValue());
  }

  @Test
  void dumpHandsOutEveryEntryWhateverItsSize() throws IOException {
    // Sizes either side of RocksDbStore's first reused buffers (256-byte keys, 4 KiB values) and
    // of the snapshot writer's 64 KiB block, in both orders, so buffers grow mid-scan.
    int[] keySizes = {1, 255, 256, 257, 2000, 3, 70_000};
    int[] valueSizes = {0, 4095, 4096, 4097, 65_536, 100_000, 10};
    List<Change> changes = new ArrayList<>();
    java.util.SplittableRandom random = new java.util.SplittableRandom(7);
    for (int i = 0; i < keySizes.length; i++) {
      byte[] key = new byte[keySizes[i]];
      random.nextBytes(key);
      key[0] = (byte) i; // distinct, and in this order
      byte[] value = new byte[valueSizes[i]];
      random.nextBytes(value);
      changes.add(Change.put(Space.LEASES, key, value));
    }
    for (int i = 0; i < 3000; i++) { // enough small entries to fill several blocks
      changes.add(Change.put(Space.EVENTS, b(String.format("e/%08d", i)), b("value-" + i)));
    }
    store.commit(new AppliedPosition(1, 1), changes);

    List<String> dumped = new ArrayList<>();
    store.read(
        view -> {
          try {
            view.dump(
                Space.LEASES,
                (key, keyLength, value, valueLength) ->
                    dumped.add(
                        digest(
                            java.util.Arrays.copyOf(key, keyLength),
                            java.util.Arrays.copyOf(value, valueLength))));
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
          return null;
        });
    List<String> scanned = new ArrayList<>();
    store.read(
        view -> {
          view.scan(
              Space.LEASES, new byte[0], new byte[0], (k, v) -> scanned.add(digest(k, v)) || true);
          return null;
        });
    assertEquals(keySizes.length, dumped.size());
    assertEquals(scanned, dumped);

    try (KvStore reference = new InMemoryStore()) {
      reference.commit(new AppliedPosition(1, 1), changes);
      byte[] snapshot = StoreKind.dump(store);
      assertArrayEquals(StoreKind.dump(reference), snapshot);
      try (KvStore loaded = new InMemoryStore()) {
        StoreKind.load(loaded, snapshot);
        assertArrayEquals(snapshot, StoreKind.dump(loaded));
      }
    }
  }

  @Test
  void snapshotBytesDependOnlyOnState() throws IOException {
    // The same final state reached by different histories, in this store and in the reference
    // store.
    store.commit(
        new AppliedPosition(1, 1),
        List.of(
            Change.put(Space.LEASES, b("z/1"), b("old")),
            Change.put(Space.LEASES, b("x/gone"), b("x"))));
    store.commit(
        new AppliedPosition(1, 2),
        List.of(
            Change.put(Space.LEASES, bytes(0x80, 0x01), b("hi")),
            Change.delete(Space.LEASES, b("x/gone")),
            Change.put(Space.LEASES, b("z/1"), b("new")),
            Change.put(Space.LEASES, b("a/1"), b("a"))));

    try (KvStore reference = new InMemoryStore()) {
      reference.commit(
          new AppliedPosition(1, 2),
          List.of(
              Change.put(Space.LEASES, b("a/1"), b("a")),
              Change.put(Space.LEASES, b("z/1"), b("new")),
              Change.put(Space.LEASES, bytes(0x80, 0x01), b("hi"))));
      assertArrayEquals(StoreKind.dump(reference), StoreKind.dump(store));
    }
  }

  @Test
  void corruptSnapshotLeavesStateUntouched() throws IOException {
    store.commit(
        new AppliedPosition(1, 1), List.of(Change.put(Space.LEASES, b("lock/keep"), b("K"))));
    byte[] before = StoreKind.dump(store);

    byte[] other;
    try (KvStore source = new InMemoryStore()) {
      source.commit(
          new AppliedPosition(2, 9),
          List.of(Change.put(Space.LEASES, b("lock/other"), b("value-of-other"))));
      other = StoreKind.dump(source);
    }
    byte[] flipped = other.clone();
    flipped[flipped.length - 12] ^= 0x01; // inside the end marker's entry count
    byte[] valueFlipped = other.clone();
    valueFlipped[indexOf(other, b("value-of-other")) + 3] ^= 0x20;
    byte[] truncated = Arrays.copyOf(other, other.length - 1);

    for (byte[] bad :
        List.of(flipped, valueFlipped, truncated, new byte[0], b("LEASEHOLD-SNAPSHOT-2\n"))) {
      assertThrows(IOException.class, () -> StoreKind.load(store, bad));
      assertArrayEquals(before, StoreKind.dump(store));
      assertEquals(new AppliedPosition(1, 1), store.applied());
    }
    StoreKind.load(store, other);
    assertEquals(new AppliedPosition(2, 9), store.applied());
  }

  protected static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    throw new AssertionError("not found");
  }

  @Test
  void writeSnapshotOfEmptyStoreLoads() throws IOException {
    byte[] empty = StoreKind.dump(store);
    store.commit(new AppliedPosition(1, 1), List.of(Change.put(Space.LEASES, b("lock/a"), b("A"))));
    StoreKind.load(store, empty);
    assertEquals(AppliedPosition.NONE, store.applied());
    assertTrue(store.get(Space.LEASES, b("lock/a")).isEmpty());
  }
}
