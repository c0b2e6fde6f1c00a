package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.BanRecord;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** The banned holders, kept in step with the BANS space after each commit; written by the apply thread only. */
final class Bans {
  private final Map<String, BanRecord> byHolder = new HashMap<>();
  /** The earliest end of a timed ban (leader-stamped micros), for the leader's lifter on another thread. */
  private volatile long nextEndMicros = Long.MAX_VALUE;

  /** The ban in force on {@code holder} at leader time {@code now}: a timed ban past its end no longer counts. */
  Optional<BanRecord> active(String holder, long now) {
    if (byHolder.isEmpty()) {
      return Optional.empty();
    }
    BanRecord b = byHolder.get(holder);
    if (b == null || (b.getUntilMicros() != 0 && b.getUntilMicros() <= now)) {
      return Optional.empty();
    }
    return Optional.of(b);
  }

  /** The stored ban, in force or past its end but not yet lifted. */
  Optional<BanRecord> get(String holder) {
    return Optional.ofNullable(byHolder.get(holder));
  }

  void put(String holder, BanRecord ban) {
    byHolder.put(holder, ban);
    recomputeNextEnd();
  }

  void remove(String holder) {
    if (byHolder.remove(holder) != null) {
      recomputeNextEnd();
    }
  }

  long nextEndMicros() {
    return nextEndMicros;
  }

  void load(KvStore store) {
    byHolder.clear();
    store.read(view -> {
      view.scan(Space.BANS, new byte[0], new byte[0], (key, value) -> {
        byHolder.put(new String(key, StandardCharsets.UTF_8), parse(value));
        return true;
      });
      return null;
    });
    recomputeNextEnd();
  }

  private void recomputeNextEnd() {
    long next = Long.MAX_VALUE;
    for (BanRecord b : byHolder.values()) {
      if (b.getUntilMicros() != 0) {
        next = Math.min(next, b.getUntilMicros());
      }
    }
    nextEndMicros = next;
  }

  static BanRecord parse(byte[] bytes) {
    try {
      return BanRecord.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt ban record", e);
    }
  }
}
