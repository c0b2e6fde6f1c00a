package io.leasehold.statemachine.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteBatch;

class WriteBatchEncoderTest {
  /** Key and value lengths on both sides of each varint length step (1, 2 and 3 bytes). */
  private static final int[] LENGTHS = {0, 1, 127, 128, 16_383, 16_384, 70_000};

  @TempDir Path tempDir;

  @Test
  void encodesExactlyWhatRocksDbsOwnWriteBatchHolds() throws Exception {
    RocksDB.loadLibrary();
    List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY));
    // Enough families that one id takes two varint bytes (ids start at 1 after the default one).
    for (int i = 0; i < 130; i++) {
      descriptors.add(new ColumnFamilyDescriptor(("cf" + i).getBytes()));
    }
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions options =
            new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
        RocksDB db = RocksDB.open(options, tempDir.resolve("db").toString(), descriptors, handles);
        WriteBatch reference = new WriteBatch()) {
      Random random = new Random(11);
      List<Op> ops = new ArrayList<>();
      for (int keyLength : LENGTHS) {
        for (int valueLength : LENGTHS) {
          ColumnFamilyHandle cf = handles.get(1 + random.nextInt(handles.size() - 1));
          ops.add(
              new Op(
                  cf.getID(), bytes(random, Math.max(1, keyLength)), bytes(random, valueLength)));
        }
        ops.add(
            new Op(
                handles.get(handles.size() - 1).getID(),
                bytes(random, Math.max(1, keyLength)),
                null));
      }
      int exact = WriteBatchEncoder.HEADER;
      for (Op op : ops) {
        ColumnFamilyHandle cf = handle(handles, op.cf);
        if (op.value == null) {
          reference.delete(cf, op.key);
          exact += WriteBatchEncoder.deleteSize(op.cf, op.key.length);
        } else {
          reference.put(cf, op.key, op.value);
          exact += WriteBatchEncoder.putSize(op.cf, op.key.length, op.value.length);
        }
      }
      byte[] sized = encode(ops, exact);
      assertEquals(exact, sized.length, "the sizes add up to the batch's length");
      assertArrayEquals(reference.data(), sized);
      // A capacity too small only costs growing: the bytes are the same.
      assertArrayEquals(sized, encode(ops, 0));
    } finally {
      handles.forEach(ColumnFamilyHandle::close);
    }
  }

  private static byte[] encode(List<Op> ops, int capacity) {
    WriteBatchEncoder encoder = new WriteBatchEncoder(capacity);
    for (Op op : ops) {
      if (op.value == null) {
        encoder.delete(op.cf, op.key);
      } else {
        encoder.put(op.cf, op.key, op.value);
      }
    }
    return encoder.toByteArray();
  }

  private static ColumnFamilyHandle handle(List<ColumnFamilyHandle> handles, int id) {
    return handles.stream().filter(h -> h.getID() == id).findFirst().orElseThrow();
  }

  private static byte[] bytes(Random random, int length) {
    byte[] b = new byte[length];
    random.nextBytes(b);
    return b;
  }

  private record Op(int cf, byte[] key, byte[] value) {}
}
