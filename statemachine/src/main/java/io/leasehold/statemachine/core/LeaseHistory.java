package io.leasehold.statemachine.core;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.HistoryRecord;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import io.leasehold.statemachine.store.StoreException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The history of ended leases, per name ({@link Space#NAME_HISTORY}) and per holder ({@link
 * Space#HOLDER_HISTORY}), each bounded. Records are keyed (owner, 0x00, i64 sequence); this keeps,
 * per owner, the first sequence still stored and the next to write, so appending and dropping the
 * oldest need no read. Names and holders cannot contain 0x00, so an owner's prefix never matches
 * another owner's keys.
 */
final class LeaseHistory {
  private final Map<String, long[]> names = new HashMap<>();
  private final Map<String, long[]> holders = new HashMap<>();

  /** The records one entry adds for one owner. */
  static final class Pending {
    private final long first;
    private final long next;
    private final List<byte[]> records = new ArrayList<>();
    private int limit;

    Pending(long[] bounds) {
      this.first = bounds[0];
      this.next = bounds[1];
    }

    void add(byte[] record, int limit) {
      records.add(record);
      this.limit = limit;
    }

    long newNext() {
      return next + records.size();
    }

    long newFirst() {
      return Math.max(first, newNext() - limit);
    }

    /**
     * Puts for the records that stay and deletes for those the bound pushes out; a record both
     * added and dropped is never written.
     */
    void changes(Space space, String owner, List<Change> out) {
      long newFirst = newFirst();
      for (long seq = first; seq < Math.min(newFirst, next); seq++) {
        out.add(Change.delete(space, key(owner, seq)));
      }
      for (long seq = Math.max(newFirst, next); seq < newNext(); seq++) {
        out.add(Change.put(space, key(owner, seq), records.get((int) (seq - next))));
      }
    }
  }

  /** {first kept, next to write} for an owner; {0, 0} if it has no history. */
  long[] bounds(Space space, String owner) {
    long[] b = map(space).get(owner);
    return b == null ? new long[] {0, 0} : b.clone();
  }

  /** Every owner of {@code space} with a history whose name starts with {@code prefix}. */
  List<String> ownersWithPrefix(Space space, String prefix) {
    List<String> out = new ArrayList<>();
    map(space)
        .keySet()
        .forEach(
            o -> {
              if (o.startsWith(prefix)) {
                out.add(o);
              }
            });
    out.sort(null);
    return out;
  }

  /** The owner's history is gone (its records deleted in the same entry). */
  void forget(Space space, String owner) {
    map(space).remove(owner);
  }

  void publish(Space space, String owner, Pending p) {
    map(space).put(owner, new long[] {p.newFirst(), p.newNext()});
  }

  void load(KvStore store) {
    for (Space space : new Space[] {Space.NAME_HISTORY, Space.HOLDER_HISTORY}) {
      Map<String, long[]> m = map(space);
      m.clear();
      store.read(
          view -> {
            view.scan(
                space,
                new byte[0],
                new byte[0],
                (key, value) -> {
                  String owner = new String(key, 0, key.length - 9, StandardCharsets.UTF_8);
                  long seq = ByteBuffer.wrap(key, key.length - 8, 8).getLong();
                  long[] b = m.get(owner);
                  if (b == null) {
                    m.put(owner, new long[] {seq, seq + 1});
                  } else {
                    b[1] = seq + 1;
                  }
                  return true;
                });
            return null;
          });
    }
  }

  private Map<String, long[]> map(Space space) {
    return space == Space.NAME_HISTORY ? names : holders;
  }

  static byte[] key(String owner, long seq) {
    byte[] o = owner.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(o.length + 9).put(o).put((byte) 0).putLong(seq).array();
  }

  static byte[] prefix(String owner) {
    byte[] o = owner.getBytes(StandardCharsets.UTF_8);
    return Arrays.copyOf(o, o.length + 1);
  }

  static HistoryRecord parse(byte[] bytes) {
    try {
      return HistoryRecord.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException("corrupt history record", e);
    }
  }
}
