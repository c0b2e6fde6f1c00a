package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.AuditEntry;
import io.leasehold.proto.v1.AuditRequest;
import io.leasehold.proto.v1.AuditResponse;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The audit history: one record per admin or auth command applied (who, what, when, outcome),
 * written in the same entry as the command, so every replica keeps the same history. It keeps the
 * newest {@link #KEPT} records: each record past that drops the oldest in the same entry.
 */
final class AuditTrail {
  static final int KEPT = 10_000;

  private final KvStore store;

  /** The keys of the records kept, oldest first; apply thread only. */
  private final ArrayDeque<byte[]> keys = new ArrayDeque<>();

  AuditTrail(KvStore store) {
    this.store = store;
  }

  void load() {
    keys.clear();
    store.read(
        v -> {
          v.scan(
              Space.AUDIT,
              new byte[0],
              new byte[0],
              (key, value) -> {
                keys.add(key);
                return true;
              });
          return null;
        });
  }

  /**
   * Records {@code entry} at the entry's revision, among the changes {@code changes} the entry
   * commits.
   */
  void record(List<Change> changes, long revision, AuditEntry entry) {
    byte[] key = ByteBuffer.allocate(12).putLong(revision).putInt(0).array();
    changes.add(
        Change.put(
            Space.AUDIT, key, entry.toBuilder().setRevision(revision).build().toByteArray()));
    keys.add(key);
    while (keys.size() > KEPT) {
      changes.add(Change.delete(Space.AUDIT, keys.removeFirst()));
    }
  }

  AuditResponse read(AuditRequest r) {
    if (r.getLimit() < 0) {
      throw new InvalidArgumentException("limit", "must not be negative, got " + r.getLimit());
    }
    if (!r.getIdentity().isEmpty()) {
      Validation.holder("identity", r.getIdentity());
    }
    int limit = r.getLimit() == 0 ? KEPT : Math.min(r.getLimit(), KEPT);
    return store.read(
        v -> {
          AuditResponse.Builder b = AuditResponse.newBuilder().setRevision(v.applied().index());
          List<AuditEntry> all = new ArrayList<>();
          v.scan(
              Space.AUDIT,
              new byte[0],
              new byte[0],
              (key, value) -> {
                AuditEntry e = parse(value);
                if (r.getIdentity().isEmpty() || r.getIdentity().equals(e.getIdentity())) {
                  all.add(e);
                }
                return true;
              });
          for (int i = all.size() - 1; i >= 0 && b.getEntriesCount() < limit; i--) {
            b.addEntries(AuditText.forReading(all.get(i)));
          }
          return b.build();
        });
  }

  private static AuditEntry parse(byte[] bytes) {
    try {
      return AuditEntry.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt audit record", e);
    }
  }
}
