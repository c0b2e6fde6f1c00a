package io.leasehold.statemachine.store;

import java.util.Arrays;

/**
 * Encodes a RocksDB write batch in Java, in RocksDB's own format (db/write_batch.cc):
 *
 * <pre>
 *   fixed64 sequence (0: RocksDB assigns it), fixed32 count, then per record
 *   0x05 varint32 cf varstring key varstring value    (put into a column family)
 *   0x04 varint32 cf varstring key                    (delete from a column family)
 *   varstring := varint32 length, bytes
 * </pre>
 *
 * A batch of a thousand renewals then crosses JNI once instead of a thousand times.
 *
 * <p>The caller sizes the buffer exactly with {@link #putSize} and {@link #deleteSize}, so a batch
 * costs one array of its own length: one applied entry writes a few hundred bytes, and a fixed 4
 * KiB buffer per entry was a third of the apply thread's garbage.
 */
final class WriteBatchEncoder {
  private static final byte PUT_CF = 0x05;
  private static final byte DELETE_CF = 0x04;
  static final int HEADER = 12;

  private byte[] buf;
  private int size = HEADER;
  private int count;

  /**
   * @param capacity the batch's whole size, {@link #HEADER} included (it grows if that was short)
   */
  WriteBatchEncoder(int capacity) {
    buf = new byte[Math.max(HEADER, capacity)];
  }

  /** The bytes {@link #put} adds. */
  static int putSize(int cf, int keyLength, int valueLength) {
    return 1
        + varintSize(cf)
        + varintSize(keyLength)
        + keyLength
        + varintSize(valueLength)
        + valueLength;
  }

  /** The bytes {@link #delete} adds. */
  static int deleteSize(int cf, int keyLength) {
    return 1 + varintSize(cf) + varintSize(keyLength) + keyLength;
  }

  /** The bytes {@link #add} adds for this change. */
  static int size(int cf, Change change) {
    return change.value().isPresent()
        ? putSize(cf, change.key().length, change.value().get().length)
        : deleteSize(cf, change.key().length);
  }

  /** A put or a delete, as the change says. */
  void add(int cf, Change change) {
    if (change.value().isPresent()) {
      put(cf, change.key(), change.value().get());
    } else {
      delete(cf, change.key());
    }
  }

  private static int varintSize(int v) {
    // 1 byte per started group of 7 bits; 0 takes one byte, a negative int five.
    return v == 0 ? 1 : (38 - Integer.numberOfLeadingZeros(v)) / 7;
  }

  void put(int cf, byte[] key, byte[] value) {
    ensure(putSize(cf, key.length, value.length));
    buf[size++] = PUT_CF;
    varint(cf);
    varint(key.length);
    System.arraycopy(key, 0, buf, size, key.length);
    size += key.length;
    varint(value.length);
    System.arraycopy(value, 0, buf, size, value.length);
    size += value.length;
    count++;
  }

  void delete(int cf, byte[] key) {
    ensure(deleteSize(cf, key.length));
    buf[size++] = DELETE_CF;
    varint(cf);
    varint(key.length);
    System.arraycopy(key, 0, buf, size, key.length);
    size += key.length;
    count++;
  }

  /**
   * The batch's bytes: header (sequence 0, count) and records; the buffer itself if it was sized
   * exactly.
   */
  byte[] toByteArray() {
    byte[] out = size == buf.length ? buf : Arrays.copyOf(buf, size);
    // sequence: 8 zero bytes already; count: fixed32 little-endian.
    out[8] = (byte) count;
    out[9] = (byte) (count >>> 8);
    out[10] = (byte) (count >>> 16);
    out[11] = (byte) (count >>> 24);
    return out;
  }

  private void varint(int v) {
    while ((v & ~0x7F) != 0) {
      buf[size++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf[size++] = (byte) v;
  }

  private void ensure(int extra) {
    if (size + extra > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + extra));
    }
  }
}
