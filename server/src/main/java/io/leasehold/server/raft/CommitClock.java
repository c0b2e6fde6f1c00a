package io.leasehold.server.raft;

import org.apache.ratis.server.RaftServer;

/**
 * When the leader found its commit index moved: a diagnostic hook, used by the latency benchmark to
 * time commit-to-watcher from the commit rather than from before the entry was appended.
 *
 * <p>The leader's apply path reads the commit index after each applied entry ({@link #applied}):
 * Ratis wakes the apply thread as soon as its commit index moves, and an applied entry is
 * committed, so the reading is never early; it is late by the wake-up and by any entry applied
 * before, and a write is reported no later than its apply, so before its reply.
 *
 * <p>Only a leader reports. With no listener set, an applied entry costs one volatile read.
 */
public final class CommitClock {
  /** Called on a Ratis thread; must return quickly. */
  @FunctionalInterface
  public interface Listener {
    /**
     * Log entries {@code (fromExclusive, toInclusive]} were found committed at {@code nanoTime}
     * ({@link System#nanoTime}).
     */
    void committed(long fromExclusive, long toInclusive, long nanoTime);
  }

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

  /**
   * From the node's apply path, after each applied entry: reads the commit index if this node
   * leads.
   */
  public void applied(RaftServer.Division division) {
    if (listener != null && division.getInfo().isLeader()) {
      observe(division.getRaftLog().getLastCommittedIndex());
    }
  }

  /**
   * Reports under a lock: a caller that finds its commit index already reported returns only once
   * that report has reached the listener, so no write is reported after its reply.
   */
  private void observe(long commitIndex) {
    if (listener == null) {
      return; // the usual case: no lock
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
