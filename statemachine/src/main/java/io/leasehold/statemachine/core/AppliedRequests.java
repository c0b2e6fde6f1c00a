package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.StoredRequest;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The request ids of Acquires applied recently, oldest first: an entry whose id is here was applied
 * before and must change nothing. A caller's first attempt can reach a leader's log, time out at
 * the caller, and commit after the caller's retry on another node was answered — and after the
 * caller released the lease; applied again it would grant the name a second time.
 *
 * <p>What is kept is decided by the log alone, so every replica forgets the same ids at the same
 * entry: an id goes once more than {@link #MIN_KEPT} newer ones are kept and it was applied more
 * than {@link #RETAIN_MICROS} of leader time before the entry applying now, or once more than
 * {@link #MAX_KEPT} are kept. The count floor keeps the newest ids even if a leader's clock jumps
 * forward. Only ids and positions are in memory; replies are read from the store when a duplicate
 * comes (rarely). Kept in step with the REQUESTS space. Apply thread only.
 */
final class AppliedRequests {
  static final int MAX_ID_LENGTH = 64;
  static final int MIN_KEPT = 10_000;
  static final int MAX_KEPT = 100_000;
  static final long RETAIN_MICROS = 10L * 60 * 1_000_000;

  /** Ids forgotten per id added: more than one, so a backlog (after a clock jump back) drains. */
  static final int FORGET_PER_ADD = 4;

  private record Applied(long revision, long atMicros) {}

  private final LinkedHashMap<String, Applied> byId = new LinkedHashMap<>();

  boolean contains(String id) {
    return byId.containsKey(id);
  }

  int size() {
    return byId.size();
  }

  void add(String id, long revision, long atMicros) {
    byId.put(id, new Applied(revision, atMicros));
  }

  void remove(String id) {
    byId.remove(id);
  }

  /**
   * The oldest ids the entry applying at {@code nowMicros} forgets, at most {@link
   * #FORGET_PER_ADD}.
   */
  List<String> due(long nowMicros) {
    List<String> out = new ArrayList<>(0);
    int size = byId.size();
    Iterator<Map.Entry<String, Applied>> it = byId.entrySet().iterator();
    while (it.hasNext() && out.size() < FORGET_PER_ADD) {
      Map.Entry<String, Applied> oldest = it.next();
      int left = size - out.size();
      boolean tooMany = left > MAX_KEPT;
      boolean stale = left > MIN_KEPT && nowMicros - oldest.getValue().atMicros() > RETAIN_MICROS;
      if (!tooMany && !stale) {
        break;
      }
      out.add(oldest.getKey());
    }
    return out;
  }

  void load(KvStore store) {
    byId.clear();
    List<Map.Entry<String, Applied>> all = new ArrayList<>();
    store.read(
        view -> {
          view.scan(
              Space.REQUESTS,
              new byte[0],
              new byte[0],
              (key, value) -> {
                StoredRequest r = decode(value);
                all.add(
                    Map.entry(
                        new String(key, StandardCharsets.UTF_8),
                        new Applied(r.getRevision(), r.getAppliedAtMicros())));
                return true;
              });
          return null;
        });
    // Keys are in id order; the oldest-first order is by revision.
    all.sort(Comparator.comparingLong(e -> e.getValue().revision()));
    all.forEach(e -> byId.put(e.getKey(), e.getValue()));
  }

  static StoredRequest decode(byte[] value) {
    try {
      return StoredRequest.parseFrom(value);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt applied-request record", e);
    }
  }
}
