package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.LeaseRecord;
import java.util.function.BiConsumer;

/**
 * The live leases by name, kept small: every replica holds every live lease on its heap. A lease
 * with only the common fields (no attributes, no policy terms) is kept as a {@link Compact} of 88
 * bytes with its name, where its {@link LeaseRecord} takes 120 and a {@code HashMap} entry 32 more;
 * one with more keeps its record. {@link #get} builds a fresh record of a compact entry: callers
 * get the same values, never the same object. A renewal of a compact lease overwrites its entry in
 * place: the entry has usually been promoted to the old generation by then, and a new one for every
 * renewal left the collector a dead object there each time (a million leases renewed under a 512
 * MiB heap ran into full collections). Apply thread only.
 */
final class LeaseTable {
  private final NameTable<Object> table = new NameTable<>(LeaseTable::nameOf);

  /**
   * A lease's common fields: the holder's string is the one the caller passed (the index's, shared
   * by the holder's leases), as a rebuilt record returns it.
   */
  private static final class Compact {
    final String name;
    String holder;
    long token;
    long ttlMicros;
    long acquiredAtMicros;
    long renewedAtMicros;
    long lastRenewRevision;
    long renewCount;
    long modRevision;
    long session;

    Compact(String name, LeaseRecord r) {
      this.name = name;
      set(r);
    }

    void set(LeaseRecord r) {
      holder = r.getHolder();
      token = r.getToken();
      ttlMicros = r.getTtlMicros();
      acquiredAtMicros = r.getAcquiredAtMicros();
      renewedAtMicros = r.getRenewedAtMicros();
      lastRenewRevision = r.getLastRenewRevision();
      renewCount = r.getRenewCount();
      modRevision = r.getModRevision();
      session = r.getSession();
    }

    LeaseRecord record() {
      return LeaseRecord.newBuilder()
          .setHolder(holder)
          .setToken(token)
          .setTtlMicros(ttlMicros)
          .setAcquiredAtMicros(acquiredAtMicros)
          .setRenewedAtMicros(renewedAtMicros)
          .setLastRenewRevision(lastRenewRevision)
          .setRenewCount(renewCount)
          .setModRevision(modRevision)
          .setSession(session)
          .build();
    }
  }

  /** A lease with fields a {@link Compact} does not have, as its record. */
  private record Full(String name, LeaseRecord record) {}

  /** Whether every field of {@code r} fits a {@link Compact}. */
  static boolean fitsCompact(LeaseRecord r) {
    return !r.hasAttributes()
        && r.getHeartbeatMicros() == 0
        && r.getGraceMicros() == 0
        && r.getUnknownFields().asMap().isEmpty();
  }

  private static String nameOf(Object entry) {
    return entry instanceof Compact c ? c.name : ((Full) entry).name();
  }

  private static LeaseRecord record(Object entry) {
    return entry == null ? null : entry instanceof Compact c ? c.record() : ((Full) entry).record();
  }

  int size() {
    return table.size();
  }

  LeaseRecord get(String name) {
    return record(table.get(name));
  }

  /** Sets {@code name}'s lease; returns the one it replaced, or null. */
  LeaseRecord put(String name, LeaseRecord lease) {
    Object old = table.get(name);
    LeaseRecord replaced = record(old);
    boolean compact = fitsCompact(lease);
    if (compact && old instanceof Compact c) {
      c.set(lease);
      return replaced;
    }
    // A renewal's name is a fresh string parsed from its entry: keep the one the table (and the
    // index, and the leader's deadline) already hold, or every renewed lease holds two.
    String kept = old == null ? name : nameOf(old);
    table.put(compact ? new Compact(kept, lease) : new Full(kept, lease));
    return replaced;
  }

  /** Drops {@code name}'s lease; returns it, or null if there was none. */
  LeaseRecord remove(String name) {
    return record(table.remove(name));
  }

  void clear() {
    table.clear();
  }

  /** Every lease, in no particular order; each compact one as a fresh record. */
  void forEach(BiConsumer<String, LeaseRecord> visitor) {
    table.forEach(entry -> visitor.accept(nameOf(entry), record(entry)));
  }
}
