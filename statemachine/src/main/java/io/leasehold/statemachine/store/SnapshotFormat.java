package io.leasehold.statemachine.store;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

/**
 * The store-independent snapshot format: a header, then every entry of every space in space-id
 * and key order, then an end marker and a CRC32 of all that came before.
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

  public static void write(ReadView view, OutputStream raw) throws IOException {
    CheckedOutputStream checked = new CheckedOutputStream(raw, new CRC32());
    DataOutputStream out = new DataOutputStream(checked);
    out.write(MAGIC);
    long[] count = {0};
    IOException[] failure = {null};
    for (Space space : Space.values()) {
      view.scan(space, new byte[0], new byte[0], (key, value) -> {
        try {
          out.writeByte(space.id());
          out.writeInt(key.length);
          out.write(key);
          out.writeInt(value.length);
          out.write(value);
          count[0]++;
          return true;
        } catch (IOException e) {
          failure[0] = e;
          return false;
        }
      });
      if (failure[0] != null) {
        throw failure[0];
      }
    }
    out.writeByte(0);
    out.writeLong(count[0]);
    out.flush();
    long crc = checked.getChecksum().getValue();
    out.writeLong(crc);
    out.flush();
  }

  /** Reads a whole snapshot, verifying its checksum before it returns; the sink sees entries as they come. */
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
      throw new IOException("corrupt Leasehold snapshot: " + count + " entries read, " + declared
          + " declared; crc " + Long.toHexString(crc) + " vs stored " + Long.toHexString(stored));
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
