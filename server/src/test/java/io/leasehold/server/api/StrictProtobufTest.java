package io.leasehold.server.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.grpc.KnownLength;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

class StrictProtobufTest {
  private static final byte[] MESSAGE = bytes(20_000);

  @Test
  void readsAStreamOfKnownLength() throws IOException {
    assertArrayEquals(MESSAGE, StrictProtobuf.readMessage(new Known(MESSAGE, MESSAGE.length)));
    assertArrayEquals(new byte[0], StrictProtobuf.readMessage(new Known(new byte[0], 0)));
  }

  @Test
  void readsAPlainStream() throws IOException {
    assertArrayEquals(MESSAGE, StrictProtobuf.readMessage(new ByteArrayInputStream(MESSAGE)));
  }

  /** A stream that announces less or more than it holds still yields every byte it holds. */
  @Test
  void aWrongLengthLosesNoBytes() throws IOException {
    assertArrayEquals(MESSAGE, StrictProtobuf.readMessage(new Known(MESSAGE, 100)));
    assertArrayEquals(MESSAGE, StrictProtobuf.readMessage(new Known(MESSAGE, MESSAGE.length + 5)));
  }

  /** Known length, announcing {@code announced} bytes as available until the first read. */
  private static final class Known extends InputStream implements KnownLength {
    private final ByteArrayInputStream in;
    private int announced;

    Known(byte[] bytes, int announced) {
      this.in = new ByteArrayInputStream(bytes);
      this.announced = announced;
    }

    @Override
    public int available() {
      return announced;
    }

    @Override
    public int read() {
      return in.read();
    }

    @Override
    public int read(byte[] b, int off, int len) {
      // Short reads, as a network buffer's may be.
      return in.read(b, off, Math.min(len, 1000));
    }
  }

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    new Random(3).nextBytes(b);
    return b;
  }
}
