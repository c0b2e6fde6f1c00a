package io.leasehold.statemachine.store;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.CheckedInputStream;

/**
 * The store-independent snapshot format: a header, then every entry of every space in space-id and
 * key order, then an end marker and a CRC32 of all that came before.
 *
 * <pre>
 *   "LEASEHOLD-SNAPSHOT-1\n"
 *   { u8 spaceId, i32 keyLength, key, i32 valueLength, value }*
 *   u8 0, i64 entryCount, i64 crc32
 * </pre>
 */
public final class SnapshotFormat {
  private static final byte[] MAGIC = "LEASEHOLD-SNAPSHOT-1\n".getBytes(StandardCharsets.US_ASCII);
  private static final int MAX_FIELD = 64 << 20;

  private SnapshotFormat() {}

  /** Receives the entries of a snapshot as it is read. */
  public interface Sink {
    void put(Space space, byte[] key, byte[] value) throws IOException;
  }

  public static void write(ReadView view, OutputStream out) throws IOException {
    write(view, out, null);
  }

  /**
   * Writes the whole view to {@code out}, and every byte of it, trailer included, also to {@code
   * digest} if there is one (Ratis keeps an MD5 beside each snapshot file; computing it here spares
   * reading the file back).
   *
   * <p>The entries go through one 64 KiB buffer of our own (so {@code out} needs none), and the
   * checksum and digest are updated a block at a time. Behind a DataOutputStream they were updated
   * per byte, through two synchronized streams, some ten calls per entry; with RocksDB's entries
   * copied into reused buffers ({@link ReadView#dump}) three nodes' snapshots written at once were
   * done 0.9-1.8 s after the request instead of 1.7-3.0 s in the latency benchmark
   * (docs/performance.md).
   */
  public static void write(ReadView view, OutputStream out, MessageDigest digest)
      throws IOException {
    BlockWriter w = new BlockWriter(out, digest);
    w.bytes(MAGIC, 0, MAGIC.length);
    long[] count = {0};
    for (Space space : Space.values()) {
      view.dump(
          space,
          (key, keyLength, value, valueLength) -> {
            w.u8(space.id());
            w.i32(keyLength);
            w.bytes(key, 0, keyLength);
            w.i32(valueLength);
            w.bytes(value, 0, valueLength);
            count[0]++;
          });
    }
    w.u8(0);
    w.i64(count[0]);
    w.i64(w.endChecksum());
    w.flush();
  }

  /** A buffered writer that checksums (and digests) whole blocks, not single bytes. */
  private static final class BlockWriter {
    private final OutputStream out;
    private final MessageDigest digest;
    private final CRC32 crc = new CRC32();
    private boolean checksumming = true;
    private final byte[] buf = new byte[1 << 16];
    private int n;

    BlockWriter(OutputStream out, MessageDigest digest) {
      this.out = out;
      this.digest = digest;
    }

    void u8(int v) throws IOException {
      room(1);
      buf[n++] = (byte) v;
    }

    void i32(int v) throws IOException {
      room(4);
      buf[n++] = (byte) (v >>> 24);
      buf[n++] = (byte) (v >>> 16);
      buf[n++] = (byte) (v >>> 8);
      buf[n++] = (byte) v;
    }

    void i64(long v) throws IOException {
      i32((int) (v >>> 32));
      i32((int) v);
    }

    void bytes(byte[] b, int off, int len) throws IOException {
      if (len > buf.length) {
        drain();
        emit(b, off, len);
        return;
      }
      room(len);
      System.arraycopy(b, off, buf, n, len);
      n += len;
    }

    /** The CRC32 of everything written so far; what follows is not checksummed (the trailer). */
    long endChecksum() throws IOException {
      drain();
      checksumming = false;
      return crc.getValue();
    }

    void flush() throws IOException {
      drain();
      out.flush();
    }

    private void room(int len) throws IOException {
      if (n + len > buf.length) {
        drain();
      }
    }

    /** Emits what the buffer holds, so the checksum and digest have seen every byte so far. */
    private void drain() throws IOException {
      if (n > 0) {
        emit(buf, 0, n);
        n = 0;
      }
    }

    private void emit(byte[] b, int off, int len) throws IOException {
      if (checksumming) {
        crc.update(b, off, len);
      }
      if (digest != null) {
        digest.update(b, off, len);
      }
      out.write(b, off, len);
    }
  }

  /**
   * Reads a whole snapshot, verifying its checksum before it returns; the sink sees entries as they
   * come.
   */
  public static void read(InputStream raw, Sink sink) throws IOException {
    CheckedInputStream checked = new CheckedInputStream(raw, new CRC32());
    DataInputStream in = new DataInputStream(checked);
    byte[] magic = new byte[MAGIC.length];
    try {
      in.readFully(magic);
    } catch (EOFException e) {
      throw new IOException("not a Leasehold snapshot: too short", e);
    }
    if (!Arrays.equals(magic, MAGIC)) {
      throw new IOException("not a Leasehold snapshot: bad header");
    }
    long count = 0;
    while (true) {
      int spaceId = in.readUnsignedByte();
      if (spaceId == 0) {
        break;
      }
      Space space;
      try {
        space = Space.byId(spaceId);
      } catch (IllegalArgumentException e) {
        throw new IOException("corrupt Leasehold snapshot: " + e.getMessage(), e);
      }
      byte[] key = readField(in);
      byte[] value = readField(in);
      sink.put(space, key, value);
      count++;
    }
    long declared = in.readLong();
    long crc = checked.getChecksum().getValue();
    long stored = new DataInputStream(raw).readLong();
    if (declared != count || stored != crc) {
      throw new IOException(
          "corrupt Leasehold snapshot: "
              + count
              + " entries read, "
              + declared
              + " declared; crc "
              + Long.toHexString(crc)
              + " vs stored "
              + Long.toHexString(stored));
    }
  }

  private static byte[] readField(DataInputStream in) throws IOException {
    int length = in.readInt();
    if (length < 0 || length > MAX_FIELD) {
      throw new IOException("corrupt Leasehold snapshot: field length " + length);
    }
    byte[] bytes = new byte[length];
    in.readFully(bytes);
    return bytes;
  }
}
