package io.leasehold.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Lz4BlockCodecTest {
  private final Lz4BlockCodec codec = new Lz4BlockCodec();

  /** As gRPC hands a decompressor a message: a stream that knows its length, closed once read. */
  static final class GrpcMessage extends ByteArrayInputStream implements io.grpc.KnownLength {
    int closes;

    GrpcMessage(byte[] bytes) {
      super(bytes);
    }

    @Override
    public void close() {
      closes++;
    }
  }

  /** Something like a watch message: names, holders and revisions that repeat. */
  static byte[] sample(int events) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < events; i++) {
      b.append("\n\u0001\u0010")
          .append(1_000_000 + i)
          .append("\u001asvc/payments/instance-")
          .append(i)
          .append("\"\u0010runner-")
          .append(i % 7)
          .append(" 10.0.")
          .append(i % 256)
          .append(".1:8080");
    }
    return b.toString().getBytes(StandardCharsets.UTF_8);
  }

  private byte[] compressThroughTheSink(byte[] plain) throws IOException {
    ByteArrayOutputStream wire = new ByteArrayOutputStream();
    try (OutputStream sink = codec.compress(wire)) {
      // As gRPC's framer writes: in pieces.
      for (int at = 0; at < plain.length; at += 1000) {
        sink.write(plain, at, Math.min(1000, plain.length - at));
      }
    }
    return wire.toByteArray();
  }

  @Test
  void whatTheSinkCompressesInflatesToTheSameBytesAndIsMuchSmaller() throws IOException {
    byte[] plain = sample(200);
    byte[] wire = compressThroughTheSink(plain);
    assertTrue(
        wire.length * 3 < plain.length,
        "repetitive messages shrink: " + wire.length + " of " + plain.length);
    GrpcMessage message = new GrpcMessage(wire);
    InputStream in = codec.decompress(message);
    assertEquals(plain.length, in.available(), "the inflated length is known before reading");
    assertEquals(0, message.closes, "gRPC's buffer is kept until the message is read");
    byte[] whole = new byte[plain.length + 10];
    assertEquals(
        plain.length,
        in.read(whole, 5, plain.length + 5),
        "one read inflates straight into the caller's array");
    assertArrayEquals(plain, Arrays.copyOfRange(whole, 5, 5 + plain.length));
    assertEquals(-1, in.read());
    assertEquals(0, in.available());
    assertEquals(1, message.closes, "and released once it was");
    in.close();
    assertEquals(1, message.closes, "once");

    GrpcMessage unread = new GrpcMessage(wire);
    codec.decompress(unread).close();
    assertEquals(1, unread.closes, "a message closed unread releases gRPC's buffer too");
  }

  @Test
  void smallAndBytewiseReadsGetTheSameBytes() throws IOException {
    byte[] plain = sample(50);
    byte[] wire = compressThroughTheSink(plain);
    InputStream chunks = codec.decompress(new GrpcMessage(wire));
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    byte[] chunk = new byte[97];
    for (int n; (n = chunks.read(chunk, 0, chunk.length)) != -1; ) {
      got.write(chunk, 0, n);
    }
    assertArrayEquals(plain, got.toByteArray());

    InputStream bytewise = codec.decompress(new ByteArrayInputStream(wire));
    got.reset();
    for (int b; (b = bytewise.read()) != -1; ) {
      got.write(b);
    }
    assertArrayEquals(plain, got.toByteArray());
  }

  @Test
  void aMessageEncodedOnceIsWrittenAsItIsAndReadsBackTheSame() throws IOException {
    byte[] plain = sample(120);
    byte[] encoded = Lz4BlockCodec.encode(plain, 0, plain.length);
    assertArrayEquals(compressThroughTheSink(plain), encoded, "the same wire form either way");
    ByteArrayOutputStream wire = new ByteArrayOutputStream();
    Lz4BlockCodec.Sink sink = (Lz4BlockCodec.Sink) codec.compress(wire);
    sink.writeEncoded(encoded);
    sink.close();
    assertArrayEquals(encoded, wire.toByteArray(), "nothing added, nothing compressed twice");
    assertArrayEquals(
        plain, codec.decompress(new ByteArrayInputStream(wire.toByteArray())).readAllBytes());
    assertArrayEquals(plain, codec.decompress(new GrpcMessage(wire.toByteArray())).readAllBytes());

    byte[] offset = Lz4BlockCodec.encode(plain, 20, 300);
    assertArrayEquals(
        Arrays.copyOfRange(plain, 20, 320),
        codec.decompress(new ByteArrayInputStream(offset)).readAllBytes());
  }

  @Test
  void anEncodedMessageMustBeTheWholeOfWhatTheSinkGets() throws IOException {
    Lz4BlockCodec.Sink written = (Lz4BlockCodec.Sink) codec.compress(new ByteArrayOutputStream());
    written.write(1);
    assertThrows(
        IllegalStateException.class,
        () -> written.writeEncoded(Lz4BlockCodec.encode(new byte[4], 0, 4)));
    Lz4BlockCodec.Sink encoded = (Lz4BlockCodec.Sink) codec.compress(new ByteArrayOutputStream());
    encoded.writeEncoded(Lz4BlockCodec.encode(new byte[4], 0, 4));
    assertThrows(IllegalStateException.class, () -> encoded.write(1));
    assertThrows(
        IllegalStateException.class,
        () -> encoded.writeEncoded(Lz4BlockCodec.encode(new byte[4], 0, 4)));
  }

  @Test
  void emptyAndIncompressibleMessagesRoundTrip() throws IOException {
    assertArrayEquals(
        new byte[0],
        codec
            .decompress(new ByteArrayInputStream(compressThroughTheSink(new byte[0])))
            .readAllBytes());
    byte[] noise = new byte[5000];
    new Random(3).nextBytes(noise);
    byte[] wire = compressThroughTheSink(noise);
    assertArrayEquals(noise, codec.decompress(new ByteArrayInputStream(wire)).readAllBytes());
  }

  @Test
  void malformedMessagesAreRefusedWithWhatIsWrong() throws IOException {
    byte[] plain = sample(40);
    byte[] wire = Lz4BlockCodec.encode(plain, 0, plain.length);

    IOException empty =
        assertThrows(
            IOException.class, () -> codec.decompress(new ByteArrayInputStream(new byte[0])));
    assertTrue(empty.getMessage().contains("length header truncated"), empty.getMessage());
    IOException tooLong =
        assertThrows(
            IOException.class,
            () ->
                codec.decompress(
                    new ByteArrayInputStream(
                        new byte[] {
                          (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 1
                        })));
    assertTrue(tooLong.getMessage().contains("longer than 5 bytes"), tooLong.getMessage());

    Lz4BlockCodec small = new Lz4BlockCodec(plain.length - 1);
    IOException limit =
        assertThrows(IOException.class, () -> small.decompress(new ByteArrayInputStream(wire)));
    assertTrue(
        limit.getMessage().contains("more than the limit of " + (plain.length - 1)),
        limit.getMessage());

    // A header that claims far more than a 3-byte block can hold: refused before any array is made.
    byte[] bomb = {(byte) 0xff, (byte) 0xff, (byte) 0x7f, 0, 0, 0};
    IOException bombed =
        assertThrows(IOException.class, () -> codec.decompress(new ByteArrayInputStream(bomb)));
    assertTrue(bombed.getMessage().contains("more than LZ4 can expand to"), bombed.getMessage());

    byte[] truncated = Arrays.copyOf(wire, wire.length - 5);
    for (InputStream in :
        new InputStream[] {new ByteArrayInputStream(truncated), new GrpcMessage(truncated)}) {
      IOException cut = assertThrows(IOException.class, () -> codec.decompress(in).readAllBytes());
      assertTrue(cut.getMessage().startsWith("lz4-block message:"), cut.getMessage());
    }
    // Read again after a failed inflate, a message gives the same error, not a puzzling one.
    InputStream failed = codec.decompress(new GrpcMessage(truncated));
    IOException first = assertThrows(IOException.class, failed::readAllBytes);
    IOException again = assertThrows(IOException.class, failed::read);
    assertEquals(first.getMessage(), again.getMessage());
    IOException bombFromGrpc =
        assertThrows(IOException.class, () -> codec.decompress(new GrpcMessage(bomb)));
    assertTrue(
        bombFromGrpc.getMessage().contains("more than LZ4 can expand to"),
        bombFromGrpc.getMessage());

    // The block with a header one byte short of, and one byte beyond, what it holds.
    assertTrue(
        plain.length >= 128 && plain.length < 1 << 14, "a two-byte length header: " + plain.length);
    for (int claim : new int[] {plain.length - 1, plain.length + 1}) {
      byte[] wrong = wire.clone();
      wrong[0] = (byte) ((claim & 0x7f) | 0x80);
      wrong[1] = (byte) (claim >>> 7);
      IOException mismatch =
          assertThrows(
              IOException.class, () -> codec.decompress(new GrpcMessage(wrong)).readAllBytes());
      assertTrue(mismatch.getMessage().startsWith("lz4-block message:"), mismatch.getMessage());
    }
    byte[] overClaim = wire.clone();
    overClaim[0] = (byte) (((plain.length + 1) & 0x7f) | 0x80);
    overClaim[1] = (byte) ((plain.length + 1) >>> 7);
    IOException says =
        assertThrows(
            IOException.class,
            () -> codec.decompress(new ByteArrayInputStream(overClaim)).readAllBytes());
    assertTrue(says.getMessage().contains("header says " + (plain.length + 1)), says.getMessage());

    assertThrows(IllegalArgumentException.class, () -> new Lz4BlockCodec(0));
  }

  @Test
  void itIsNamedForGrpcsNegotiation() {
    assertEquals("lz4-block", codec.getMessageEncoding());
    assertEquals(Lz4BlockCodec.ENCODING, codec.getMessageEncoding());
    assertEquals(
        java.util.Set.of("lz4-block", "gzip"),
        Lz4BlockCodec.decompressors().getAdvertisedMessageEncodings(),
        "a client lists it beside gRPC's default");
    assertTrue(Lz4BlockCodec.compressors().lookupCompressor("lz4-block") instanceof Lz4BlockCodec);
    assertTrue(
        Lz4BlockCodec.compressors().lookupCompressor("gzip") != null, "a server keeps gRPC's gzip");
  }
}
