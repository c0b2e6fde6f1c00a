package io.leasehold.statemachine.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.CheckedOutputStream;
import org.junit.jupiter.api.Test;

class SnapshotFormatTest {
  private static final byte[] MAGIC = "LEASEHOLD-SNAPSHOT-1\n".getBytes(StandardCharsets.US_ASCII);

  private record Entry(Space space, String key, String value) {}

  private static List<Entry> read(byte[] snapshot) throws IOException {
    List<Entry> entries = new ArrayList<>();
    SnapshotFormat.read(
        new ByteArrayInputStream(snapshot),
        (space, key, value) ->
            entries.add(
                new Entry(
                    space,
                    new String(key, StandardCharsets.ISO_8859_1),
                    new String(value, StandardCharsets.ISO_8859_1))));
    return entries;
  }

  /** A small snapshot written by the format itself. */
  private static byte[] sample() throws IOException {
    try (InMemoryStore s = new InMemoryStore()) {
      s.commit(
          new AppliedPosition(2, 17),
          List.of(
              Change.put(
                  Space.LEASES,
                  "lock/a".getBytes(StandardCharsets.UTF_8),
                  "lease-a".getBytes(StandardCharsets.UTF_8)),
              Change.put(Space.LEASES, new byte[] {(byte) 0xff}, new byte[0]),
              Change.put(
                  Space.META,
                  "clock".getBytes(StandardCharsets.UTF_8),
                  new byte[] {0, 0, 0, 1, 2, 3, 4, 5})));
      return StoreKind.dump(s);
    }
  }

  /**
   * Writes the documented layout by hand, with a correct count and CRC, for entries of any space
   * id.
   */
  private static byte[] handMade(int[] spaceIds, String[] keys, String[] values)
      throws IOException {
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    CheckedOutputStream checked = new CheckedOutputStream(raw, new CRC32());
    DataOutputStream out = new DataOutputStream(checked);
    out.write(MAGIC);
    for (int i = 0; i < spaceIds.length; i++) {
      out.writeByte(spaceIds[i]);
      byte[] k = keys[i].getBytes(StandardCharsets.UTF_8);
      byte[] v = values[i].getBytes(StandardCharsets.UTF_8);
      out.writeInt(k.length);
      out.write(k);
      out.writeInt(v.length);
      out.write(v);
    }
    out.writeByte(0);
    out.writeLong(spaceIds.length);
    out.flush();
    out.writeLong(checked.getChecksum().getValue());
    out.flush();
    return raw.toByteArray();
  }

  /** A hand-made view: whole-space scans only, as the snapshot writer makes them. */
  private static ReadView scanning(
      java.util.function.BiConsumer<Space, ReadView.EntryVisitor> scan) {
    return new ReadView() {
      @Override
      public AppliedPosition applied() {
        return AppliedPosition.NONE;
      }

      @Override
      public java.util.Optional<byte[]> get(Space space, byte[] key) {
        return java.util.Optional.empty();
      }

      @Override
      public void scan(Space space, byte[] prefix, byte[] after, EntryVisitor visitor) {
        scan.accept(space, visitor);
      }
    };
  }

  @Test
  void readsWhatItWrites() throws IOException {
    List<Entry> entries = read(sample());
    assertEquals(new Entry(Space.LEASES, "lock/a", "lease-a"), entries.get(0));
    assertEquals(new Entry(Space.LEASES, "\u00ff", ""), entries.get(1));
    assertEquals(Space.META, entries.get(2).space());
    assertEquals(4, entries.size(), "3 entries and the applied position");
  }

  @Test
  void layoutIsAsDocumented() throws IOException {
    byte[] expected =
        handMade(new int[] {1, 2}, new String[] {"lock/a", "k"}, new String[] {"A", "v"});
    // InMemoryStore always adds its applied position, so compare a hand-made file against a
    // hand-made view instead.
    ReadView view =
        scanning(
            (space, visitor) -> {
              if (space == Space.LEASES) {
                visitor.visit(
                    "lock/a".getBytes(StandardCharsets.UTF_8),
                    "A".getBytes(StandardCharsets.UTF_8));
              } else if (space == Space.META) {
                visitor.visit(
                    "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
              }
            });
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    SnapshotFormat.write(view, out);
    assertArrayEquals(expected, out.toByteArray());
  }

  @Test
  void largeEntriesAndManyBlocksKeepTheLayoutAndTheDigestCoversEveryByte() throws Exception {
    // Entries larger than the writer's 64 KiB block, and enough small ones to fill several.
    int n = 4000;
    int[] spaceIds = new int[n];
    String[] keys = new String[n];
    String[] values = new String[n];
    for (int i = 0; i < n; i++) {
      spaceIds[i] = Space.LEASES.id();
      keys[i] = String.format("lock/%06d", i);
      values[i] = i % 1000 == 7 ? "v".repeat(70_000 + i) : "value-" + i;
    }
    byte[] expected = handMade(spaceIds, keys, values);
    ReadView view =
        scanning(
            (space, visitor) -> {
              for (int i = 0; space == Space.LEASES && i < n; i++) {
                visitor.visit(
                    keys[i].getBytes(StandardCharsets.UTF_8),
                    values[i].getBytes(StandardCharsets.UTF_8));
              }
            });
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    java.security.MessageDigest md5 = java.security.MessageDigest.getInstance("MD5");
    SnapshotFormat.write(view, out, md5);
    assertArrayEquals(expected, out.toByteArray());
    assertArrayEquals(
        java.security.MessageDigest.getInstance("MD5").digest(expected),
        md5.digest(),
        "the digest is of the whole file, trailer included");
    assertEquals(n, read(out.toByteArray()).size());
  }

  @Test
  void rejectsBadHeader() throws IOException {
    byte[] good = sample();
    byte[] wrongVersion = good.clone();
    wrongVersion[MAGIC.length - 2] = '2';
    IOException e = assertThrows(IOException.class, () -> read(wrongVersion));
    assertTrue(e.getMessage().contains("header"), e.getMessage());

    assertThrows(
        IOException.class,
        () ->
            read(
                "PK\u0003\u0004 a zip file, not a snapshot at all"
                    .getBytes(StandardCharsets.ISO_8859_1)));
    assertThrows(IOException.class, () -> read(new byte[0]));
    assertThrows(IOException.class, () -> read(Arrays.copyOf(MAGIC, 5)));
  }

  @Test
  void rejectsTruncatedInputAtEveryLength() throws IOException {
    byte[] good = sample();
    for (int length = 0; length < good.length; length++) {
      byte[] cut = Arrays.copyOf(good, length);
      int l = length;
      assertThrows(
          IOException.class,
          () -> read(cut),
          () -> "accepted a snapshot cut to " + l + " of " + good.length + " bytes");
    }
  }

  @Test
  void rejectsWrongCountOrChecksum() throws IOException {
    byte[] good = sample();
    byte[] badCrc = good.clone();
    badCrc[good.length - 1] ^= 0x01;
    assertThrows(IOException.class, () -> read(badCrc));
    byte[] badCount = good.clone();
    badCount[good.length - 9] ^= 0x01;
    assertThrows(IOException.class, () -> read(badCount));
  }

  @Test
  void rejectsOversizedFieldLength() throws IOException {
    byte[] good = sample();
    byte[] huge = good.clone();
    huge[MAGIC.length + 1] = 0x7f; // the first key's length: ~2 GB
    IOException e = assertThrows(IOException.class, () -> read(huge));
    assertTrue(e.getMessage().contains("length"), e.getMessage());
  }

  /** Every single-byte corruption is detected (CRC32 catches all of them in the covered bytes). */
  @Test
  void everySingleByteFlipIsDetected() throws IOException {
    byte[] good = sample();
    for (int at = 0; at < good.length; at++) {
      for (int mask : new int[] {0x01, 0x80, 0xff}) {
        byte[] bad = good.clone();
        bad[at] ^= (byte) mask;
        try {
          read(bad);
          fail("accepted a snapshot with byte " + at + " xor " + mask);
        } catch (IOException | RuntimeException expected) {
          // detected; the exception type is checked by everySingleByteFlipFailsWithIOException
        }
      }
    }
  }

  @Test
  void everySingleByteFlipFailsWithIOException() throws IOException {
    byte[] good = sample();
    for (int at = 0; at < good.length; at++) {
      for (int mask : new int[] {0x01, 0x80, 0xff}) {
        byte[] bad = good.clone();
        bad[at] ^= (byte) mask;
        int where = at;
        assertThrows(IOException.class, () -> read(bad), () -> "byte " + where + " xor " + mask);
      }
    }
  }

  @Test
  void unknownSpaceIdIsRejectedWithIOException() throws IOException {
    byte[] unknownSpace =
        handMade(new int[] {1, 99}, new String[] {"lock/a", "x"}, new String[] {"A", "y"});
    assertThrows(IOException.class, () -> read(unknownSpace));
  }

  @Test
  void sinkFailureStopsTheRead() throws IOException {
    byte[] good = sample();
    List<Space> seen = new ArrayList<>();
    IOException e =
        assertThrows(
            IOException.class,
            () ->
                SnapshotFormat.read(
                    new ByteArrayInputStream(good),
                    (space, key, value) -> {
                      seen.add(space);
                      throw new IOException("disk full");
                    }));
    assertEquals("disk full", e.getMessage());
    assertEquals(1, seen.size());
  }
}
