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

/**
 * The banned holders, kept in step with the BANS space after each commit; apply thread only. A
 * stored ban is in force until Unban or, for a timed ban, until the leader's LiftBans is applied:
 * its {@code until} is what the operator asked for and an estimate for replies, never compared with
 * the stamped time to decide anything.
 */
final class Bans {
  private final Map<String, BanRecord> byHolder = new HashMap<>();

  /** The ban in force on {@code holder}: every stored ban, timed or not, until it is lifted. */
  Optional<BanRecord> get(String holder) {
    return byHolder.isEmpty() ? Optional.empty() : Optional.ofNullable(byHolder.get(holder));
  }

  void put(String holder, BanRecord ban) {
    byHolder.put(holder, ban);
  }

  void remove(String holder) {
    byHolder.remove(holder);
  }

  void load(KvStore store) {
    byHolder.clear();
    store.read(
        view -> {
          view.scan(
              Space.BANS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                byHolder.put(new String(key, StandardCharsets.UTF_8), parse(value));
                return true;
              });
          return null;
        });
  }

  static BanRecord parse(byte[] bytes) {
    try {
      return BanRecord.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt ban record", e);
    }
  }
}
