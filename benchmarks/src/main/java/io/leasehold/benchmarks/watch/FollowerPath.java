package io.leasehold.benchmarks.watch;

import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.raft.ReplicationTrace;
import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;

/**
 * Where a follower watcher's commit-to-watch goes, step by step, from the nodes'
 * {@link ReplicationTrace}s. A follower hears of a commit only with an append the leader builds
 * after it. If that append has entries, Ratis takes its commit index only once the follower's log
 * has synced them; if it has none (a commit push, or a heartbeat), at once. Then the follower
 * applies the entry and streams the event. For each recorded event whose commit came with entries
 * this splits the time from the leader's commit to the follower's watcher into:
 * <ol>
 *   <li>the leader's commit to the first append built for this follower that carries it;</li>
 *   <li>that append's trip to the follower's Ratis service (the network and gRPC's hand-offs);</li>
 *   <li>from there to the follower's answer for it (its log's write and sync, then the commit index);</li>
 *   <li>from there to the follower's apply of the event's entry;</li>
 *   <li>the apply to the watcher's receipt (Leasehold's watch path and the client).</li>
 * </ol>
 * Steps 3 and 4 both start where step 2 ends; the apply can come before or after the answer. An
 * event whose commit came without entries is split the same way, less step 3.
 *
 * <p>All times are {@link System#nanoTime} in this one JVM. Each slot keeps the first report for
 * its index; an index that falls outside the window given at construction is not recorded.
 */
final class FollowerPath {
  private final String followerId;
  private final long base;
  private final int size;
  /** By the leader's commit index carried: when the first append carrying it was built. */
  private final AtomicLongArray builtNs;
  /** By the leader's commit index carried: where that append's entries end (its previous entry for a heartbeat). */
  private final AtomicLongArray builtLast;
  private final AtomicLongArray builtHeartbeat;
  /** By the last index of an append: when it reached the follower's Ratis service. */
  private final AtomicLongArray receivedNs;
  /** By the leader's commit index carried: when an append without entries carrying it reached the follower's service. */
  private final AtomicLongArray commitReceivedNs;
  /** By match index: when the follower handed its answer to gRPC. */
  private final AtomicLongArray answeredNs;
  /** By log index: when the follower applied it. */
  private final AtomicLongArray appliedNs;
  private final LeaseholdNode leader;
  private final LeaseholdNode follower;

  /** Starts recording at once, for log indexes in {@code (base, base + size)}. */
  FollowerPath(LeaseholdNode leader, LeaseholdNode follower, long base, int size) {
    this.leader = leader;
    this.follower = follower;
    this.followerId = follower.id();
    this.base = base;
    this.size = size;
    this.builtNs = new AtomicLongArray(size);
    this.builtLast = new AtomicLongArray(size);
    this.builtHeartbeat = new AtomicLongArray(size);
    this.receivedNs = new AtomicLongArray(size);
    this.commitReceivedNs = new AtomicLongArray(size);
    this.answeredNs = new AtomicLongArray(size);
    this.appliedNs = new AtomicLongArray(size);
    leader.diagnostics().replicationTrace().listen(new ReplicationTrace.Listener() {
      @Override
      public void appendBuilt(String to, long leaderCommit, long lastIndex, boolean heartbeat, long nanos) {
        int s = slot(leaderCommit);
        if (s >= 0 && to.equals(followerId) && builtNs.compareAndSet(s, 0, nanos)) {
          builtLast.set(s, lastIndex);
          builtHeartbeat.set(s, heartbeat ? 1 : 0);
        }
      }
    });
    follower.diagnostics().replicationTrace().listen(new ReplicationTrace.Listener() {
      @Override
      public void appendReceived(long lastIndex, long nanos) {
        first(receivedNs, lastIndex, nanos);
      }

      @Override
      public void commitReceived(long leaderCommit, long nanos) {
        first(commitReceivedNs, leaderCommit, nanos);
      }

      @Override
      public void replySent(long matchIndex, long nanos) {
        first(answeredNs, matchIndex, nanos);
      }

      @Override
      public void applied(long index, long nanos) {
        first(appliedNs, index, nanos);
      }
    });
  }

  void stop() {
    leader.diagnostics().replicationTrace().listen(null);
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

  /** One event the follower's watcher received: its revision (log index), when, and when the leader found it committed. */
  record Watched(long revision, long receivedNs, long committedNs) {
  }

  /** Prints the split for {@code events} (those without every time are counted, not split). */
  void report(PrintStream out, Iterable<Watched> events) {
    // The first append carrying a commit index at or above each index: a suffix minimum over the
    // slots, since an append built later may carry a higher index than the one asked about.
    long[] carryNs = new long[size + 1];
    long[] carryLast = new long[size + 1];
    boolean[] carryHeartbeat = new boolean[size + 1];
    int[] carrySlot = new int[size + 1];
    carryNs[size] = Long.MAX_VALUE;
    for (int s = size - 1; s >= 0; s--) {
      long built = builtNs.get(s);
      if (built != 0 && built < carryNs[s + 1]) {
        carryNs[s] = built;
        carryLast[s] = builtLast.get(s);
        carryHeartbeat[s] = builtHeartbeat.get(s) == 1;
        carrySlot[s] = s;
      } else {
        carryNs[s] = carryNs[s + 1];
        carryLast[s] = carryLast[s + 1];
        carryHeartbeat[s] = carryHeartbeat[s + 1];
        carrySlot[s] = carrySlot[s + 1];
      }
    }
    Steps withEntries = new Steps();
    Histogram receivedToAnswer = Stats.nanosHistogram();
    Histogram entriesPast = new Histogram(3);
    Steps withoutEntries = new Steps();
    long incomplete = 0;
    for (Watched w : events) {
      int s = slot(w.revision());
      long carry = s >= 0 ? carryNs[s] : Long.MAX_VALUE;
      int last = carry == Long.MAX_VALUE ? -1 : slot(carryLast[s]);
      long received = last >= 0 ? receivedNs.get(last) : 0;
      long answered = last >= 0 ? answeredNs.get(last) : 0;
      long applied = s >= 0 ? appliedNs.get(s) : 0;
      if (carry != Long.MAX_VALUE && carryHeartbeat[s]) {
        // Its commit index is taken without a sync: no answer step.
        long pushReceived = commitReceivedNs.get(carrySlot[s]);
        if (w.committedNs() == 0 || pushReceived == 0 || applied == 0) {
          incomplete++;
          continue;
        }
        withoutEntries.record(w, carry, pushReceived, applied);
        continue;
      }
      if (w.committedNs() == 0 || received == 0 || answered == 0 || applied == 0) {
        incomplete++;
        continue;
      }
      withEntries.record(w, carry, received, applied);
      receivedToAnswer.recordValue(Math.max(0, answered - received));
      entriesPast.recordValue(Math.max(0, carryLast[s] - w.revision()));
    }
    out.printf(Locale.ROOT, "    the follower's path, step by step (%d events whose commit came with entries, %d without (a commit push or heartbeat), "
            + "%d without every time; the carrying append's entries ended p50 %d, p99 %d entries past the event's):%n",
        withEntries.count, withoutEntries.count, incomplete,
        entriesPast.getValueAtPercentile(50), entriesPast.getValueAtPercentile(99));
    withEntries.print(out, receivedToAnswer);
    out.printf(Locale.ROOT, "     commit carried by an append without entries:%n");
    withoutEntries.print(out, null);
  }

  /** The steps both ways share: commit to the carrying append, to the follower's service, to the apply, to the watcher. */
  private static final class Steps {
    final Histogram commitToCarry = Stats.nanosHistogram();
    final Histogram carryToReceived = Stats.nanosHistogram();
    final Histogram receivedToApplied = Stats.nanosHistogram();
    final Histogram appliedToWatch = Stats.nanosHistogram();
    long count;

    void record(Watched w, long carry, long received, long applied) {
      count++;
      commitToCarry.recordValue(Math.max(0, carry - w.committedNs()));
      carryToReceived.recordValue(Math.max(0, received - carry));
      receivedToApplied.recordValue(Math.max(0, applied - received));
      appliedToWatch.recordValue(Math.max(0, w.receivedNs() - applied));
    }

    /** {@code receivedToAnswer}, if not null, is printed after the trip to the service (appends with entries only). */
    void print(PrintStream out, Histogram receivedToAnswer) {
      out.printf(Locale.ROOT, "      leader's commit -> first append built that carries it:  %s%n", Stats.line(commitToCarry));
      out.printf(Locale.ROOT, "      that append -> at the follower's Ratis service:         %s%n", Stats.line(carryToReceived));
      if (receivedToAnswer != null) {
        out.printf(Locale.ROOT, "      at the service -> answer out (log synced, commit taken): %s%n", Stats.line(receivedToAnswer));
      }
      out.printf(Locale.ROOT, "      at the service -> the follower applied the entry:       %s%n", Stats.line(receivedToApplied));
      out.printf(Locale.ROOT, "      applied -> the watcher received the event:              %s%n", Stats.line(appliedToWatch));
    }
  }
}
