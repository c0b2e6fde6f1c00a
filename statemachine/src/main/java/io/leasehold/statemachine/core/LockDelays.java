package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.StoredLockDelay;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Names that cannot be acquired because their lease expired or was revoked or banned (Chubby's
 * lock-delay). Replicated state, not a local timer: every replica, and a new leader, refuses the
 * same acquisitions. A bar stays until the leader lifts it (LiftLockDelays, decided on its
 * monotonic clock) or the name is granted again; the stored end is only an estimate for replies,
 * and no entry compares it with its stamped time. Kept in step with the LOCK_DELAYS space. Apply
 * thread only.
 */
final class LockDelays {
  private final Map<String, StoredLockDelay> byName = new HashMap<>();

  /** The bar on {@code name}, if there is one. */
  Optional<StoredLockDelay> get(String name) {
    return byName.isEmpty() ? Optional.empty() : Optional.ofNullable(byName.get(name));
  }

  boolean contains(String name) {
    return !byName.isEmpty() && byName.containsKey(name);
  }

  void put(String name, StoredLockDelay bar) {
    byName.put(name, bar);
  }

  void remove(String name) {
    byName.remove(name);
  }

  /** Every entry whose name starts with {@code prefix}. */
  Map<String, StoredLockDelay> withPrefix(String prefix) {
    Map<String, StoredLockDelay> out = new java.util.TreeMap<>();
    byName.forEach(
        (name, value) -> {
          if (name.startsWith(prefix)) {
            out.put(name, value);
          }
        });
    return out;
  }

  void load(KvStore store) {
    byName.clear();
    store.read(
        view -> {
          view.scan(
              Space.LOCK_DELAYS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                put(new String(key, StandardCharsets.UTF_8), decode(value));
                return true;
              });
          return null;
        });
  }

  static byte[] encode(StoredLockDelay bar) {
    return bar.toByteArray();
  }

  /**
   * A stored bar. Stores written before bars carried their revision hold the 8-byte end alone: read
   * as revision 0 with no recorded delay (a new leader then waits the estimated remainder).
   */
  static StoredLockDelay decode(byte[] value) {
    if (value.length == 8) {
      return StoredLockDelay.newBuilder().setUntilMicros(ByteBuffer.wrap(value).getLong()).build();
    }
    try {
      return StoredLockDelay.parseFrom(value);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt lock-delay record", e);
    }
  }
}
