package io.leasehold.benchmarks.watch;

import io.grpc.Status;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.WatchResponse;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;

/**
 * One Watch stream that maps every ACQUIRED event of bench/<seq> to its seq and notes when it
 * arrived.
 */
final class LatencyWatcher extends EndableWatch<WatchResponse> {
  private final String where;
  private final int total;
  private final AtomicLongArray receivedNs;

  /**
   * Wall-clock receipt minus the event's time, in microseconds. The event's time is the leader's
   * stamp, taken before the entry is appended, kept monotone (max with earlier entries, whose
   * stamps all precede their own appends): so it is never later than this entry's append, let alone
   * its commit, and this is an upper bound of commit-to-watcher. One JVM, one wall clock.
   */
  private final AtomicLongArray stampToWatchMicros;

  /** The event's revision: its log index. */
  private final AtomicLongArray revision;

  private final AtomicIntegerArray seen;
  final AtomicInteger distinct = new AtomicInteger();
  volatile boolean started;
  // Written only by gRPC's serialized callbacks, read after the stream is done with.
  private volatile long duplicates;
  private volatile long outOfOrder;
  private volatile long unexpected;
  private long lastRevision;

  LatencyWatcher(String where, int total) {
    this.where = where;
    this.total = total;
    this.receivedNs = new AtomicLongArray(total);
    this.stampToWatchMicros = new AtomicLongArray(total);
    this.revision = new AtomicLongArray(total);
    this.seen = new AtomicIntegerArray(total);
  }

  @Override
  public void onNext(WatchResponse response) {
    long now = System.nanoTime();
    Instant wall = Instant.now();
    long wallMicros = wall.getEpochSecond() * 1_000_000L + wall.getNano() / 1_000;
    started = true;
    for (Event e : response.getEventsList()) {
      if (e.getRevision() < lastRevision) { // one entry's events share its revision
        outOfOrder++;
      }
      lastRevision = Math.max(lastRevision, e.getRevision());
      String name = e.getName();
      int seq = -1;
      if (e.getType() == Event.Type.ACQUIRED && name.startsWith(LatencyBenchmark.PREFIX)) {
        try {
          seq = Integer.parseInt(name, LatencyBenchmark.PREFIX.length(), name.length(), 10);
        } catch (NumberFormatException notOurs) {
          seq = -1;
        }
      }
      if (seq < 0 || seq >= total) {
        unexpected++;
        continue;
      }
      if (seen.incrementAndGet(seq) == 1) {
        receivedNs.set(seq, now);
        revision.set(seq, e.getRevision());
        stampToWatchMicros.set(
            seq,
            wallMicros - (e.getTime().getSeconds() * 1_000_000L + e.getTime().getNanos() / 1_000));
        distinct.incrementAndGet();
      } else {
        duplicates++;
      }
    }
  }

  @Override
  void failed(Status status) {
    error = status.toString();
    System.err.println("watch on " + where + " failed: " + error);
  }

  /**
   * The recorded GRANTED acquisitions this watcher saw, with the leader's commit time of each (0:
   * none reported).
   */
  List<FollowerPath.Watched> watched(
      int warmCount, int total, AtomicIntegerArray outcome, CommitTimes commits) {
    List<FollowerPath.Watched> out = new ArrayList<>();
    for (int i = warmCount; i < total; i++) {
      if (outcome.get(i) == 1 && seen.get(i) > 0) {
        out.add(
            new FollowerPath.Watched(
                revision.get(i), receivedNs.get(i), commits.at(revision.get(i))));
      }
    }
    return out;
  }

  LatencyBenchmark.WatcherResult result(
      int warmCount,
      int total,
      AtomicLongArray sendNs,
      AtomicLongArray replyNs,
      AtomicIntegerArray outcome,
      CommitTimes commits) {
    Histogram commitToWatch = Stats.nanosHistogram();
    // Where in the period the events over (A)'s p99 bound fell: around one moment (the
    // snapshot, a stall) or spread over it (the collector's pauses).
    long overBoundNs = (long) (WatchBenchmark.TARGET_P99_MS * 1e6);
    long periodStartNs = sendNs.get(warmCount);
    SortedMap<Integer, Integer> overBoundBySecond = new TreeMap<>();
    long negativeCommit = 0;
    long noCommitTime = 0;
    Histogram sendToWatch = Stats.nanosHistogram();
    Histogram replyToWatch = Stats.nanosHistogram();
    Histogram stampToWatch = Stats.nanosHistogram();
    long negative = 0;
    long missed = 0;
    long extra = 0;
    for (int i = 0; i < total; i++) {
      boolean granted = outcome.get(i) == 1;
      long received = receivedNs.get(i);
      if (granted && seen.get(i) == 0) {
        missed++;
        continue;
      }
      if (!granted && seen.get(i) > 0) {
        extra++; // an event for an acquisition whose reply was not GRANTED
      }
      if (!granted || i < warmCount) {
        continue;
      }
      long committed = commits.at(revision.get(i));
      if (committed == 0) {
        noCommitTime++;
      } else {
        long c2w = received - committed;
        if (c2w < 0) {
          negativeCommit++;
        }
        commitToWatch.recordValue(Math.max(0, c2w));
        if (c2w > overBoundNs) {
          overBoundBySecond.merge(
              (int) ((committed - periodStartNs) / 1_000_000_000L), 1, Integer::sum);
        }
      }
      sendToWatch.recordValue(Math.max(0, received - sendNs.get(i)));
      stampToWatch.recordValue(Math.max(0, stampToWatchMicros.get(i) * 1_000));
      long r2w = received - replyNs.get(i);
      if (r2w < 0) {
        negative++;
      }
      replyToWatch.recordValue(Math.max(0, r2w));
    }
    return new LatencyBenchmark.WatcherResult(
        where,
        commitToWatch,
        negativeCommit,
        noCommitTime,
        stampToWatch,
        sendToWatch,
        replyToWatch,
        negative,
        missed,
        duplicates,
        outOfOrder,
        unexpected,
        extra,
        error,
        overBoundBySecond);
  }
}
