package io.leasehold.server.raft;

import org.apache.ratis.server.RaftServer;

/**
 * When the leader's commit index moved: a diagnostic hook, used by the latency benchmark to time
 * commit-to-watcher from the commit itself rather than from before the entry was appended.
 *
 * <p>Ratis's leader advances its commit index on its leader-state thread and then, at once, tells
 * each log appender ({@code LeaderStateImpl.commitIndexChanged} → {@code notifySenders}). Our
 * appender passes each such notice here ({@link ForkSearchingLogAppender#notifyLogAppender}),
 * which reads the commit index and, if it moved since the last notice, tells the listener with
 * the time of that report. The time is therefore a little after the commit index moved (by the few
 * microseconds of Ratis's bookkeeping between the two, more if that thread is descheduled there),
 * never before: an interval measured from it is, if anything, short by that much.
 *
 * <p>Ratis wakes the apply thread just before it tells the appenders, so the leader's apply path
 * reads the commit index too ({@link #applied}): an applied entry is committed, so that reading is
 * never early either, and a write is then reported no later than its apply, so before its reply,
 * even when the leader-state thread is descheduled between the two.
 *
 * <p>Only a leader reports. With no listener set, a notice costs one volatile read.
 */
public final class CommitClock {
  /** Called on a Ratis thread; must return quickly. */
  @FunctionalInterface
  public interface Listener {
    /** Log entries {@code (fromExclusive, toInclusive]} were found committed at {@code nanoTime} ({@link System#nanoTime}). */
    void committed(long fromExclusive, long toInclusive, long nanoTime);
  }

  static final String PARAMETER = CommitClock.class.getName();

  private volatile Listener listener;
  /** The commit index last reported. Guarded by this. */
  private long reported = Long.MAX_VALUE;

  /**
   * Sets (or, with null, clears) the listener. It hears of commits after {@code committedNow}, the
   * commit index the caller has read; pass the leader's current one.
   */
  public synchronized void listen(Listener newListener, long committedNow) {
    reported = committedNow;
    listener = newListener;
  }

  /** From the node's apply path, after each applied entry: reads the commit index if this node leads. */
  public void applied(RaftServer.Division division) {
    if (listener != null && division.getInfo().isLeader()) {
      observe(division.getRaftLog().getLastCommittedIndex());
    }
  }

  /**
   * From an appender, on each notice: {@code commitIndex} is the leader's commit index as read now.
   *
   * <p>Reports under a lock: a caller that finds its commit index already reported returns only
   * once that report has reached the listener. With a bare compare-and-set, a notice that won it
   * and was descheduled before calling the listener let the apply path find the index reported and
   * go on to reply, so the write was reported after its reply (seen once in
   * ThreeNodeClusterTest).
   */
  void observe(long commitIndex) {
    if (listener == null) {
      return;  // the usual case: no lock
    }
    synchronized (this) {
      Listener l = listener;
      long before = reported;
      if (l != null && commitIndex > before) {
        reported = commitIndex;
        l.committed(before, commitIndex, System.nanoTime());
      }
    }
  }
}
