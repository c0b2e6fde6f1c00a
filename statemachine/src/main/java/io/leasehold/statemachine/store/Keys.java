package io.leasehold.statemachine.store;

/** Byte-key helpers shared by the stores. */
public final class Keys {
  private Keys() {}

  public static boolean startsWith(byte[] key, byte[] prefix) {
    if (key.length < prefix.length) {
      return false;
    }
    for (int i = 0; i < prefix.length; i++) {
      if (key[i] != prefix[i]) {
        return false;
      }
    }
    return true;
  }
}
