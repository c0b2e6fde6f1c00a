package io.leasehold.benchmarks.watch;

import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.raft.ReplicationTrace;
import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;

/**
 * Where a follower watcher's commit-to-watch goes, step by step, from the follower's {@link
 * ReplicationTrace}. A follower hears of a commit only with a message the leader sends after it: an
 * append (whose commit index Ratis takes once the follower's log has synced its entries) or a
 * heartbeat. Then the follower applies the entry and streams the event. For each recorded event
 * this splits the time from the leader's commit to the follower's watcher into:
 *
 * <ol>
 *   <li>the leader's commit to the first message reaching the follower's Ratis service that carries
 *       it (the leader's wait for its next append or heartbeat, then the network);
 *   <li>from there to the follower's apply of the event's entry;
 *   <li>the apply to the watcher's receipt (Leasehold's watch path and the client).
 * </ol>
 *
 * <p>All times are {@link System#nanoTime} in this one JVM. Each slot keeps the first report for
 * its index; an index that falls outside the window given at construction is not recorded.
 */
final class FollowerPath {
  private final long base;
  private final int size;

  /**
   * By the leader's commit index carried: when the first message carrying it reached the follower's
   * service.
   */
  private final AtomicLongArray carriedNs;

  /** By log index: when the follower applied it. */
  private final AtomicLongArray appliedNs;

  private final LeaseholdNode follower;

  /** Starts recording at once, for log indexes in {@code (base, base + size)}. */
  FollowerPath(LeaseholdNode leader, LeaseholdNode follower, long base, int size) {
    this.follower = follower;
    this.base = base;
    this.size = size;
    this.carriedNs = new AtomicLongArray(size);
    this.appliedNs = new AtomicLongArray(size);
    follower
        .diagnostics()
        .replicationTrace()
        .listen(
            new ReplicationTrace.Listener() {
              @Override
              public void appendReceived(long lastIndex, long leaderCommit, long nanos) {
                first(carriedNs, leaderCommit, nanos);
              }

              @Override
              public void commitReceived(long leaderCommit, long nanos) {
                first(carriedNs, leaderCommit, nanos);
              }

              @Override
              public void applied(long index, long nanos) {
                first(appliedNs, index, nanos);
              }
            });
  }

  void stop() {
    follower.diagnostics().replicationTrace().listen(null);
  }

  private int slot(long index) {
    long s = index - base;
    return s > 0 && s < size ? (int) s : -1;
  }

  private void first(AtomicLongArray times, long index, long nanos) {
    int s = slot(index);
    if (s >= 0) {
      times.compareAndSet(s, 0, nanos);
    }
  }

  /**
   * One event the follower's watcher received: its revision (log index), when, and when the leader
   * found it committed.
   */
  record Watched(long revision, long receivedNs, long committedNs) {}

  /** Prints the split for {@code events} (those without every time are counted, not split). */
  void report(PrintStream out, Iterable<Watched> events) {
    // The first message carrying a commit index at or above each index: a suffix minimum over the
    // slots, since a message that arrives later may carry a higher index than the one asked about.
    long[] carry = new long[size + 1];
    carry[size] = Long.MAX_VALUE;
    for (int s = size - 1; s >= 0; s--) {
      long c = carriedNs.get(s);
      carry[s] = c != 0 && c < carry[s + 1] ? c : carry[s + 1];
    }
    Histogram commitToCarried = Stats.nanosHistogram();
    Histogram carriedToApplied = Stats.nanosHistogram();
    Histogram appliedToWatch = Stats.nanosHistogram();
    long recorded = 0;
    long incomplete = 0;
    for (Watched w : events) {
      int s = slot(w.revision());
      long carried = s >= 0 ? carry[s] : Long.MAX_VALUE;
      long applied = s >= 0 ? appliedNs.get(s) : 0;
      if (w.committedNs() == 0 || carried == Long.MAX_VALUE || applied == 0) {
        incomplete++;
        continue;
      }
      recorded++;
      commitToCarried.recordValue(Math.max(0, carried - w.committedNs()));
      carriedToApplied.recordValue(Math.max(0, applied - carried));
      appliedToWatch.recordValue(Math.max(0, w.receivedNs() - applied));
    }
    out.printf(
        Locale.ROOT,
        "    the follower's path, step by step (%d events, %d without every time):%n",
        recorded,
        incomplete);
    out.printf(
        Locale.ROOT,
        "      leader's commit -> first message carrying it at the follower: %s%n",
        Stats.line(commitToCarried));
    out.printf(
        Locale.ROOT,
        "      that message -> the follower applied the entry:              %s%n",
        Stats.line(carriedToApplied));
    out.printf(
        Locale.ROOT,
        "      applied -> the watcher received the event:                   %s%n",
        Stats.line(appliedToWatch));
  }
}
