package io.leasehold.statemachine.core;

import java.nio.charset.StandardCharsets;

/** Keys of the holder index: (holder, 0x00, name), so one holder's leases sort together by name. */
final class HolderKeys {
  static final byte[] EMPTY = new byte[0];

  private HolderKeys() {}

  static byte[] key(String holder, String name) {
    byte[] h = holder.getBytes(StandardCharsets.UTF_8);
    byte[] n = name.getBytes(StandardCharsets.UTF_8);
    byte[] key = new byte[h.length + 1 + n.length];
    System.arraycopy(h, 0, key, 0, h.length);
    System.arraycopy(n, 0, key, h.length + 1, n.length);
    return key;
  }

  /** Every key of the holder's leases starts with this. */
  static byte[] prefix(String holder) {
    return key(holder, "");
  }

  /** The name in a key under {@link #prefix}. */
  static String name(byte[] key, int prefixLength) {
    return new String(key, prefixLength, key.length - prefixLength, StandardCharsets.UTF_8);
  }
}
