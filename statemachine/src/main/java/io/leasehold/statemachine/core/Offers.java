package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.StoredOffer;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Transfers offered and not yet accepted, by name, kept in step with the OFFERS space. An offer
 * stands until it is accepted, replaced, withdrawn by the leader at its deadline, or the lease it
 * was made on ends. Apply thread only.
 */
final class Offers {
  private final Map<String, StoredOffer> byName = new HashMap<>();

  Optional<StoredOffer> get(String name) {
    return byName.isEmpty() ? Optional.empty() : Optional.ofNullable(byName.get(name));
  }

  void put(String name, StoredOffer offer) {
    byName.put(name, offer);
  }

  void remove(String name) {
    byName.remove(name);
  }

  /** Every entry whose name starts with {@code prefix}. */
  Map<String, StoredOffer> withPrefix(String prefix) {
    Map<String, StoredOffer> out = new java.util.TreeMap<>();
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
              Space.OFFERS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                byName.put(new String(key, StandardCharsets.UTF_8), parse(value));
                return true;
              });
          return null;
        });
  }

  static StoredOffer parse(byte[] bytes) {
    try {
      return StoredOffer.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt offer record", e);
    }
  }
}
