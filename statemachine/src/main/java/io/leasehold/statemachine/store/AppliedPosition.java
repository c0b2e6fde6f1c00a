package io.leasehold.statemachine.store;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** The Raft term and log index of the last entry whose effects are in a store. */
public record AppliedPosition(long term, long index) {
  public static final AppliedPosition NONE = new AppliedPosition(0, 0);

  /** The key under which every store keeps its applied position, in {@link Space#META}. */
  public static final byte[] META_KEY = "applied".getBytes(StandardCharsets.US_ASCII);

  public AppliedPosition {
    if (term < 0 || index < 0) {
      throw new IllegalArgumentException("term and index must be >= 0, got " + term + "/" + index);
    }
  }

  public byte[] encode() {
    return ByteBuffer.allocate(16).putLong(term).putLong(index).array();
  }

  public static AppliedPosition decode(byte[] bytes) {
    if (bytes.length != 16) {
      throw new IllegalStateException("corrupt applied position: " + bytes.length + " bytes");
    }
    ByteBuffer b = ByteBuffer.wrap(bytes);
    return new AppliedPosition(b.getLong(), b.getLong());
  }
}
