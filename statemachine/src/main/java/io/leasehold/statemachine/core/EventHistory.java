package io.leasehold.statemachine.core;

import io.leasehold.proto.v1.CompactHistory;
import io.leasehold.proto.v1.CompactHistoryResponse;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.HistoryMeta;
import io.leasehold.statemachine.store.Change;
import io.leasehold.statemachine.store.KvStore;
import io.leasehold.statemachine.store.Space;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The persisted event history a Watch replays: its bounds (the compact revision, the count), its
 * reads, and its compaction, which every replica applies alike.
 */
final class EventHistory {
  static final byte[] HISTORY_KEY = "history".getBytes(StandardCharsets.US_ASCII);

  private final KvStore store;

  /** Events below this revision are gone from the history; the stored value is the truth. */
  private volatile long compactRevision;

  /**
   * Events in the history. Not stored (an extra write per event), recounted on load; only the
   * leader's compactor reads it, to choose a compaction point it then proposes.
   */
  private volatile long historyCount;

  EventHistory(KvStore store) {
    this.store = store;
  }

  /** Re-reads the bounds from the store (at start, and after a snapshot replaced it). */
  void reload() {
    compactRevision = storedCompactRevision(store.get(Space.META, HISTORY_KEY));
    historyCount =
        store.read(
            view -> {
              long[] n = {0};
              view.scan(
                  Space.EVENTS,
                  new byte[0],
                  liveFrom(compactRevision),
                  (key, value) -> {
                    n[0]++;
                    return true;
                  });
              return n[0];
            });
  }

  /** The history's bounds as of the latest applied entry, for the leader's compactor. */
  HistoryMeta bounds() {
    return HistoryMeta.newBuilder()
        .setCompactRevision(compactRevision)
        .setCount(historyCount)
        .build();
  }

  /**
   * Visits, in one consistent view, every event in the history from {@code fromRevision} on, unless
   * the history no longer reaches back that far ({@link LeaseCore.HistoryRead#compacted}).
   */
  LeaseCore.HistoryRead read(long fromRevision, Consumer<Event> visitor) {
    return store.read(
        view -> {
          long compacted = storedCompactRevision(view.get(Space.META, HISTORY_KEY));
          long revision = view.applied().index();
          if (fromRevision < compacted) {
            return new LeaseCore.HistoryRead(true, compacted, revision);
          }
          // Seek straight to the start: the keys of revision fromRevision - 1 all sort below
          // (fromRevision - 1, 0xFFFFFFFF), and sequences never reach that value.
          byte[] after = fromRevision <= 0 ? new byte[0] : Events.key(fromRevision - 1, -1);
          view.scan(
              Space.EVENTS,
              new byte[0],
              after,
              (key, value) -> {
                visitor.accept(Events.toApi(Events.decode(Events.revisionOf(key), value)));
                return true;
              });
          return new LeaseCore.HistoryRead(false, compacted, revision);
        });
  }

  /**
   * The revision below which the history may be dropped to keep at most {@code maxCount} events,
   * none older than {@code notBeforeMicros} (leader-stamped time). The leader proposes it as a
   * CompactHistory; work is proportional to the events that go.
   */
  long compactionPoint(long maxCount, long notBeforeMicros) {
    return store.read(
        view -> {
          long excess = historyCount - maxCount;
          long[] point = {storedCompactRevision(view.get(Space.META, HISTORY_KEY))};
          long[] seen = {0};
          view.scan(
              Space.EVENTS,
              new byte[0],
              liveFrom(point[0]),
              (key, value) -> {
                long revision = Events.revisionOf(key);
                boolean tooMany = seen[0] < excess;
                boolean tooOld = Events.decode(revision, value).timeMicros() < notBeforeMicros;
                if (!tooMany && !tooOld) {
                  // Compaction works by revision: this event's whole revision stays.
                  point[0] = revision;
                  return false;
                }
                seen[0]++;
                point[0] = revision + 1;
                return true;
              });
          // Nothing to drop: the history's start stays. Moving it to the first event would refuse a
          // watch from an earlier revision that had no events (the log format's entry, say) and
          // lost none.
          return seen[0] == 0 ? storedCompactRevision(view.get(Space.META, HISTORY_KEY)) : point[0];
        });
  }

  /**
   * Drops the history below a revision the leader chose from its bounds (count, age). Every replica
   * drops the same events, so every node serves the same history and snapshots agree.
   */
  CompactHistoryResponse compact(Tx tx, CompactHistory c) {
    long from = compactRevision;
    long below = Math.min(c.getBelowRevision(), tx.index);
    CompactHistoryResponse.Builder reply =
        CompactHistoryResponse.newBuilder().setRevision(tx.index);
    if (below <= from) {
      return reply.setCompactRevision(from).build();
    }
    byte[] end = Events.key(below, 0);
    List<byte[]> doomed = new ArrayList<>();
    store.read(
        view -> {
          view.scan(
              Space.EVENTS,
              new byte[0],
              liveFrom(from),
              (key, value) -> {
                if (Arrays.compareUnsigned(key, end) >= 0) {
                  return false;
                }
                doomed.add(key);
                return true;
              });
          return null;
        });
    doomed.forEach(key -> tx.extra.add(Change.delete(Space.EVENTS, key)));
    tx.compacted(below, doomed.size());
    return reply.setCompactRevision(below).setRemoved(doomed.size()).build();
  }

  /** The meta write of a compaction, if the entry made one. */
  static Optional<Change> meta(Optional<Tx.Compaction> compaction) {
    return compaction.map(
        c ->
            Change.put(
                Space.META,
                HISTORY_KEY,
                HistoryMeta.newBuilder().setCompactRevision(c.below()).build().toByteArray()));
  }

  /**
   * After a commit: {@code kept} events joined the history, and a compaction, if any, dropped some.
   */
  void committed(int kept, Optional<Tx.Compaction> compaction) {
    historyCount += kept - compaction.map(Tx.Compaction::removed).orElse(0L);
    compaction.ifPresent(c -> compactRevision = c.below());
  }

  private static long storedCompactRevision(Optional<byte[]> meta) {
    return meta.map(LeaseCore::parseHistory)
        .orElse(HistoryMeta.getDefaultInstance())
        .getCompactRevision();
  }

  /**
   * Where the live history starts, as a scan's exclusive lower bound: every key below the compact
   * revision is deleted, and a scan from the first key would step over all of those tombstones (a
   * second per compaction once a few hundred thousand events had gone).
   */
  private static byte[] liveFrom(long compactRevision) {
    return compactRevision <= 0 ? new byte[0] : Events.key(compactRevision - 1, -1);
  }
}
