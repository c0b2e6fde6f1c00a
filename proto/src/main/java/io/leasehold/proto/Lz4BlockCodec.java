package io.leasehold.proto;

import io.grpc.Codec;
import io.grpc.CompressorRegistry;
import io.grpc.DecompressorRegistry;
import io.grpc.KnownLength;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Objects;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * The gRPC message encoding {@value #ENCODING}, which a node uses for Watch streams whose client
 * accepts it. One message on the wire is the uncompressed length as an unsigned LEB128 varint, then
 * those bytes compressed as a single LZ4 block (the LZ4 <em>block</em> format, not the frame
 * format: no magic, no checksums; gRPC's framing already delimits the message).
 *
 * <p>Why LZ4 and not gRPC's standard gzip: a node with a thousand watchers sends each event to all
 * of them, and every client inflates every message. A 200-event message inflates from gzip in 22–39
 * µs, from LZ4 in about 3, and LZ4 still shrinks watch messages severalfold (their names, holders
 * and revisions repeat).
 *
 * <p>Compression is negotiated the gRPC way: a client lists the encodings it can read in {@code
 * grpc-accept-encoding} (the SDK lists this one: {@code io.leasehold.client.internal.Endpoint}); a
 * node compresses a Watch stream only for a client that listed it, and sends ordinary messages to
 * any other. A message that many watchers share is compressed once ({@link #encode}, {@link
 * Sink#writeEncoded}).
 */
public final class Lz4BlockCodec implements Codec {
  public static final String ENCODING = "lz4-block";

  /**
   * gRPC's default limit on a received message, which this decoder applies to the inflated size.
   */
  public static final int DEFAULT_MAX_MESSAGE_BYTES = 4 << 20;

  /** LZ4 cannot expand input by more than this: a header claiming more is malformed. */
  private static final int MAX_EXPANSION = 255;

  private static final LZ4Factory LZ4 = LZ4Factory.fastestInstance();
  // Both are stateless and thread-safe.
  private static final LZ4Compressor COMPRESSOR = LZ4.fastCompressor();
  private static final LZ4SafeDecompressor DECOMPRESSOR = LZ4.safeDecompressor();

  private static final DecompressorRegistry DECOMPRESSORS =
      DecompressorRegistry.getDefaultInstance().with(new Lz4BlockCodec(), true);

  private final int maxMessageBytes;

  /** A codec that refuses messages that inflate beyond gRPC's default 4 MiB. */
  public Lz4BlockCodec() {
    this(DEFAULT_MAX_MESSAGE_BYTES);
  }

  /** A codec that refuses messages whose inflated size would exceed {@code maxMessageBytes}. */
  public Lz4BlockCodec(int maxMessageBytes) {
    if (maxMessageBytes <= 0) {
      throw new IllegalArgumentException(
          "maxMessageBytes: must be positive, got " + maxMessageBytes);
    }
    this.maxMessageBytes = maxMessageBytes;
  }

  /**
   * gRPC's default decoders and this one (4 MiB limit), listed in {@code grpc-accept-encoding}: for
   * a client channel.
   */
  public static DecompressorRegistry decompressors() {
    return DECOMPRESSORS;
  }

  /** gRPC's default compressors (gzip) and this one: for a server that compresses with it. */
  public static CompressorRegistry compressors() {
    CompressorRegistry registry = CompressorRegistry.newEmptyInstance();
    registry.register(Codec.Identity.NONE);
    registry.register(new Codec.Gzip());
    registry.register(new Lz4BlockCodec());
    return registry;
  }

  @Override
  public String getMessageEncoding() {
    return ENCODING;
  }

  @Override
  public OutputStream compress(OutputStream os) {
    return new Sink(os);
  }

  /**
   * One message in this encoding (varint length, then the LZ4 block) for {@code len} bytes of
   * {@code src} from {@code off}: what {@link Sink#writeEncoded} takes.
   */
  public static byte[] encode(byte[] src, int off, int len) {
    Objects.checkFromIndexSize(off, len, src.length);
    int max = COMPRESSOR.maxCompressedLength(len);
    byte[] out = new byte[5 + max];
    int at = writeVarint(out, len);
    int n = COMPRESSOR.compress(src, off, len, out, at, max);
    return Arrays.copyOf(out, at + n);
  }

  @Override
  public InputStream decompress(InputStream is) throws IOException {
    long length = 0;
    int headerBytes = 0;
    for (int shift = 0; ; shift += 7) {
      int b = is.read();
      if (b == -1) {
        is.close();
        throw new IOException(
            ENCODING + " message: length header truncated (" + headerBytes + " bytes in all)");
      }
      headerBytes++;
      if (shift > 28) {
        is.close();
        throw new IOException(ENCODING + " message: length header longer than 5 bytes");
      }
      length |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        break;
      }
    }
    if (length > maxMessageBytes) {
      is.close();
      throw new IOException(
          ENCODING
              + " message: inflates to "
              + length
              + " bytes, more than the limit of "
              + maxMessageBytes);
    }
    InputStream block = is;
    int blockBytes;
    if (is instanceof KnownLength) {
      // gRPC's message streams: the block is read when the message is, straight from gRPC's buffer.
      blockBytes = is.available();
    } else {
      byte[] rest;
      try (is) {
        rest = is.readAllBytes();
      }
      block = new ByteArrayInputStream(rest);
      blockBytes = rest.length;
    }
    if (length > (long) blockBytes * MAX_EXPANSION + 16) {
      block.close();
      throw new IOException(
          ENCODING
              + " message: header claims "
              + length
              + " bytes from a "
              + blockBytes
              + "-byte block, more than LZ4 can expand to");
    }
    return new BlockStream(block, blockBytes, (int) length);
  }

  private static int writeVarint(byte[] out, int value) {
    int at = 0;
    while ((value & ~0x7f) != 0) {
      out[at++] = (byte) ((value & 0x7f) | 0x80);
      value >>>= 7;
    }
    out[at++] = (byte) value;
    return at;
  }

  /**
   * Where gRPC's framer writes a message to be compressed. Bytes written to it are compressed when
   * it is closed. A message that was already encoded for many streams is handed over whole by
   * {@link #writeEncoded} instead, and not compressed again.
   */
  public static final class Sink extends OutputStream {
    private final OutputStream out;
    private ByteArrayOutputStream buffer;
    private boolean encodedWritten;
    private boolean closed;

    Sink(OutputStream out) {
      this.out = out;
    }

    /** Writes {@code encoded}, a whole message from {@link #encode}, as this message. */
    public void writeEncoded(byte[] encoded) throws IOException {
      if (encodedWritten || (buffer != null && buffer.size() > 0) || closed) {
        throw new IllegalStateException(
            "an encoded message must be the whole of what the sink gets");
      }
      encodedWritten = true;
      out.write(encoded);
    }

    @Override
    public void write(int b) {
      buffer().write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      buffer().write(b, off, len);
    }

    private ByteArrayOutputStream buffer() {
      if (encodedWritten || closed) {
        throw new IllegalStateException("the sink already has its whole message");
      }
      if (buffer == null) {
        buffer = new ByteArrayOutputStream(4096);
      }
      return buffer;
    }

    @Override
    public void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      if (!encodedWritten) {
        byte[] plain = buffer == null ? new byte[0] : buffer.toByteArray();
        out.write(encode(plain, 0, plain.length));
      }
    }
  }

  /** Compressed blocks up to 256 KiB are read into one reused array per thread. */
  private static final ThreadScratch SCRATCH = new ThreadScratch(16 << 10, 256 << 10);

  /**
   * A message's inflated bytes, inflated on first read from the block still in gRPC's buffer. A
   * reader that asks for the whole message at once (gRPC's message streams announce their length
   * through {@link #available}) gets it inflated straight into its own array: the codec keeps no
   * array of its own per message, so a client with a thousand streams makes no more garbage than
   * with plain messages.
   */
  private static final class BlockStream extends InputStream implements KnownLength {
    private final InputStream block;
    private final int blockBytes;
    private final int length;
    private byte[] plain;
    private boolean inflated;

    /** Why inflating failed, if it did: a later read gets the same error, not a misleading one. */
    private IOException failure;

    private boolean blockClosed;
    private int pos;

    BlockStream(InputStream block, int blockBytes, int length) {
      this.block = block;
      this.blockBytes = blockBytes;
      this.length = length;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      Objects.checkFromIndexSize(off, len, b.length);
      if (len == 0) {
        return 0;
      }
      if (pos == length) {
        return -1;
      }
      if (!inflated && len >= length) {
        inflate(b, off);
        pos = length;
        return length;
      }
      int n = Math.min(len, length - pos);
      System.arraycopy(plain(), pos, b, off, n);
      pos += n;
      return n;
    }

    @Override
    public int read() throws IOException {
      if (pos == length) {
        return -1;
      }
      return plain()[pos++] & 0xff;
    }

    @Override
    public int available() {
      return length - pos;
    }

    @Override
    public void close() throws IOException {
      closeBlock();
    }

    /** Releases gRPC's buffer, once: after inflating, or when the message is closed unread. */
    private void closeBlock() throws IOException {
      if (!blockClosed) {
        blockClosed = true;
        block.close();
      }
    }

    private byte[] plain() throws IOException {
      if (plain == null) {
        byte[] p = new byte[length];
        inflate(p, 0);
        plain = p;
      }
      return plain;
    }

    /** Inflates the whole message into {@code dest} from {@code off}; once per stream. */
    private void inflate(byte[] dest, int off) throws IOException {
      if (failure != null) {
        throw new IOException(failure.getMessage(), failure);
      }
      if (inflated) {
        throw new IllegalStateException("inflated twice");
      }
      inflated = true;
      try {
        inflateOnce(dest, off);
      } catch (IOException e) {
        failure = e;
        throw e;
      }
    }

    private void inflateOnce(byte[] dest, int off) throws IOException {
      byte[] src = SCRATCH.get(blockBytes);
      int read;
      try {
        read = block.readNBytes(src, 0, blockBytes);
      } finally {
        closeBlock();
      }
      if (read != blockBytes) {
        throw new IOException(
            ENCODING + " message: block ended after " + read + " of " + blockBytes + " bytes");
      }
      int n;
      try {
        n = DECOMPRESSOR.decompress(src, 0, blockBytes, dest, off, length);
      } catch (LZ4Exception e) {
        throw new IOException(ENCODING + " message: corrupt LZ4 block: " + e.getMessage(), e);
      }
      if (n != length) {
        throw new IOException(
            ENCODING + " message: block inflates to " + n + " bytes, header says " + length);
      }
    }
  }
}
