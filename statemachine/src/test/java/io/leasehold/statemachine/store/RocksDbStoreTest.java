package io.leasehold.statemachine.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class RocksDbStoreTest extends KvStoreContract {
  @Override
  protected KvStore newStore(Path tempDir) throws IOException {
    return RocksDbStore.open(tempDir.resolve("db"));
  }

  private RocksDbStore reopen() throws IOException {
    store.close();
    store = null;
    RocksDbStore reopened = RocksDbStore.open(tempDir.resolve("db"));
    store = reopened;
    return reopened;
  }

  @Test
  void storesSharingAMemoryBudgetCloseOnTheirOwnAndTheLastReleaseFreesIt() throws IOException {
    RocksDbStore.Memory memory = RocksDbStore.Memory.create();
    RocksDbStore first = RocksDbStore.open(tempDir.resolve("a"), memory);
    RocksDbStore second = RocksDbStore.open(tempDir.resolve("b"), memory);
    first.commit(new AppliedPosition(1, 1), List.of(Change.put(Space.LEASES, b("lock/a"), b("A"))));
    second.commit(
        new AppliedPosition(1, 1), List.of(Change.put(Space.LEASES, b("lock/b"), b("B"))));
    memory.release(); // the creator's reference: the stores keep the budget alive
    first.close();
    second.commit(
        new AppliedPosition(1, 2), List.of(Change.put(Space.LEASES, b("lock/c"), b("C"))));
    assertArrayEquals(b("B"), second.get(Space.LEASES, b("lock/b")).orElseThrow());
    assertArrayEquals(b("C"), second.get(Space.LEASES, b("lock/c")).orElseThrow());
    assertTrue(second.get(Space.LEASES, b("lock/a")).isEmpty(), "each store has its own data");
    second.close();
    IllegalStateException released =
        assertThrows(
            IllegalStateException.class, () -> RocksDbStore.open(tempDir.resolve("c"), memory));
    assertEquals("RocksDB's memory budget was released", released.getMessage());
    RocksDbStore again = RocksDbStore.open(tempDir.resolve("a"));
    try {
      assertArrayEquals(b("A"), again.get(Space.LEASES, b("lock/a")).orElseThrow());
    } finally {
      again.close();
    }
  }

  /**
   * The batch is encoded in Java: lengths of one, two and three varint bytes, many records,
   * deletes.
   */
  @Test
  void javaEncodedBatchesCarryLongKeysValuesAndManyRecords() throws IOException {
    byte[] longKey = new byte[300];
    java.util.Arrays.fill(longKey, (byte) 'k');
    byte[] bigValue = new byte[70_000];
    new java.util.Random(7).nextBytes(bigValue);
    java.util.List<Change> changes = new java.util.ArrayList<>();
    changes.add(Change.put(Space.LEASES, longKey, bigValue));
    changes.add(Change.put(Space.LEASES, b("lock/empty"), new byte[0]));
    for (int i = 0; i < 2_000; i++) {
      changes.add(Change.put(Space.META, b("m-" + i), b("v-" + i)));
    }
    store.commit(new AppliedPosition(1, 7), changes);
    store.commit(new AppliedPosition(1, 8), List.of(Change.delete(Space.META, b("m-5"))));

    reopen();
    assertArrayEquals(bigValue, store.get(Space.LEASES, longKey).orElseThrow());
    assertArrayEquals(new byte[0], store.get(Space.LEASES, b("lock/empty")).orElseThrow());
    assertArrayEquals(b("v-1999"), store.get(Space.META, b("m-1999")).orElseThrow());
    assertTrue(store.get(Space.META, b("m-5")).isEmpty());
    assertEquals(new AppliedPosition(1, 8), store.applied());
  }

  /**
   * settle() leaves every memtable empty (its rows are in table files) and returns only when no
   * flush or compaction runs or is pending; the rows are all still there.
   */
  @Test
  void settleWritesTheMemtablesOutAndReturnsWithNoBackgroundWorkLeft() throws Exception {
    RocksDbStore rocks = (RocksDbStore) store;
    for (int round = 1; round <= 5; round++) {
      List<Change> changes = new java.util.ArrayList<>();
      for (int i = 0; i < 1_000; i++) {
        changes.add(Change.put(Space.LEASES, b("lock/" + round + "/" + i), b("v" + round)));
      }
      store.commit(new AppliedPosition(1, round), changes);
      assertEquals(
          1_000,
          rocks.property(Space.LEASES, "rocksdb.num-entries-active-mem-table"),
          "the round's rows wait in the memtable");
      assertTrue(rocks.settle(java.time.Duration.ofSeconds(30)), "quiet within the timeout");
      for (Space space : List.of(Space.LEASES, Space.META)) {
        assertEquals(
            0,
            rocks.property(space, "rocksdb.num-entries-active-mem-table"),
            space + ": memtable written out");
        assertEquals(
            0,
            rocks.property(space, "rocksdb.num-immutable-mem-table"),
            space + ": no memtable waiting to flush");
        assertEquals(
            0,
            rocks.property(space, "rocksdb.compaction-pending"),
            space + ": no compaction pending");
      }
      assertEquals(0, rocks.property(Space.LEASES, "rocksdb.num-running-compactions"));
      assertEquals(0, rocks.property(Space.LEASES, "rocksdb.num-running-flushes"));
    }
    assertEquals(5_000, rocks.property(Space.LEASES, "rocksdb.estimate-num-keys"));
    assertArrayEquals(b("v5"), store.get(Space.LEASES, b("lock/5/999")).orElseThrow());
    assertArrayEquals(b("v1"), store.get(Space.LEASES, b("lock/1/0")).orElseThrow());
    assertEquals(new AppliedPosition(1, 5), store.applied());
  }

  @Test
  void keepsStateAndAppliedPositionAcrossCloseAndReopen() throws IOException {
    store.commit(
        new AppliedPosition(2, 41),
        List.of(
            Change.put(Space.LEASES, b("lock/a"), b("A")),
            Change.put(Space.LEASES, b("lock/b"), b("B")),
            Change.put(Space.META, b("clock"), bytes(9, 9))));
    store.commit(new AppliedPosition(3, 42), List.of(Change.delete(Space.LEASES, b("lock/b"))));
    byte[] before = StoreKind.dump(store);

    reopen();
    assertEquals(new AppliedPosition(3, 42), store.applied());
    assertArrayEquals(b("A"), store.get(Space.LEASES, b("lock/a")).orElseThrow());
    assertTrue(store.get(Space.LEASES, b("lock/b")).isEmpty());
    assertArrayEquals(before, StoreKind.dump(store));
  }

  @Test
  void loadedSnapshotSurvivesReopenAndLeavesNoStagingDirectory() throws IOException {
    byte[] snapshot;
    try (KvStore source = new InMemoryStore()) {
      source.commit(
          new AppliedPosition(5, 100), List.of(Change.put(Space.LEASES, b("lock/s"), b("S"))));
      snapshot = StoreKind.dump(source);
    }
    store.commit(
        new AppliedPosition(1, 1), List.of(Change.put(Space.LEASES, b("lock/old"), b("O"))));
    StoreKind.load(store, snapshot);
    assertFalse(Files.exists(tempDir.resolve("db.incoming")));

    reopen();
    assertEquals(new AppliedPosition(5, 100), store.applied());
    assertArrayEquals(snapshot, StoreKind.dump(store));
  }

  @Test
  void failedLoadKeepsStateAcrossReopenAndCleansUp() throws IOException {
    store.commit(
        new AppliedPosition(1, 7), List.of(Change.put(Space.LEASES, b("lock/keep"), b("K"))));
    byte[] before = StoreKind.dump(store);
    byte[] bad = before.clone();
    bad[bad.length - 1] ^= 0x01;
    assertThrows(IOException.class, () -> StoreKind.load(store, bad));
    assertFalse(Files.exists(tempDir.resolve("db.incoming")), "the staging database is removed");

    reopen();
    assertEquals(new AppliedPosition(1, 7), store.applied());
    assertArrayEquals(before, StoreKind.dump(store));
  }

  @Test
  void closedStoreRefusesUse() {
    store.close();
    assertThrows(StoreException.class, () -> store.get(Space.LEASES, b("lock/a")));
    assertThrows(StoreException.class, () -> store.read(ReadView::applied));
    store = null;
  }
}
