package io.leasehold.statemachine.core;

import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Names that cannot be acquired until a leader-stamped time, because their lease expired or was
 * revoked or banned (Chubby's lock-delay). Replicated state, not a local timer: every replica,
 * and a new leader, refuses the same acquisitions. Kept in step with the LOCK_DELAYS space;
 * delays that have passed are dropped by the entries that follow. Apply thread only.
 */
final class LockDelays {
  private final Map<String, Long> untilByName = new HashMap<>();
  private final TreeMap<Long, TreeSet<String>> byUntil = new TreeMap<>();

  /** How long {@code name} remains barred at leader time {@code now}, if it is. */
  OptionalLong remaining(String name, long now) {
    if (untilByName.isEmpty()) {
      return OptionalLong.empty();
    }
    Long until = untilByName.get(name);
    return until == null || until <= now ? OptionalLong.empty() : OptionalLong.of(until - now);
  }

  boolean contains(String name) {
    return !untilByName.isEmpty() && untilByName.containsKey(name);
  }

  /** Names whose delay has passed at {@code now}, earliest first, at most {@code max}. */
  List<String> passed(long now, int max) {
    if (byUntil.isEmpty() || byUntil.firstKey() > now) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (Map.Entry<Long, TreeSet<String>> e : byUntil.headMap(now, true).entrySet()) {
      for (String name : e.getValue()) {
        if (out.size() == max) {
          return out;
        }
        out.add(name);
      }
    }
    return out;
  }

  void put(String name, long until) {
    remove(name);
    untilByName.put(name, until);
    byUntil.computeIfAbsent(until, u -> new TreeSet<>()).add(name);
  }

  void remove(String name) {
    Long old = untilByName.remove(name);
    if (old != null) {
      TreeSet<String> names = byUntil.get(old);
      names.remove(name);
      if (names.isEmpty()) {
        byUntil.remove(old);
      }
    }
  }

  void load(KvStore store) {
    untilByName.clear();
    byUntil.clear();
    store.read(view -> {
      view.scan(Space.LOCK_DELAYS, new byte[0], new byte[0], (key, value) -> {
        put(new String(key, StandardCharsets.UTF_8), decode(value));
        return true;
      });
      return null;
    });
  }

  static byte[] encode(long until) {
    return ByteBuffer.allocate(8).putLong(until).array();
  }

  static long decode(byte[] value) {
    return ByteBuffer.wrap(value).getLong();
  }
}
