package io.leasehold.server;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.impl.LeaderCommitPush;

/**
 * On the leader, after each applied entry, makes sure every follower hears the new commit index
 * promptly (see {@link LeaderCommitPush}); a follower whose entries were still on their way is
 * looked at again a few times over the next milliseconds (until it has answered them; the
 * message carrying them may predate the commit). Bounded: a follower that is down is not polled forever, only after applies.
 */
final class CommitPusher implements AutoCloseable {
  private static final long[] RECHECK_MICROS = {250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000};

  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "leasehold-commit-push");
    t.setDaemon(true);
    return t;
  });
  /** Index into RECHECK_MICROS of the next recheck; -1: none scheduled. */
  private final AtomicInteger nextRecheck = new AtomicInteger(-1);

  /** From the apply thread. */
  void onApplied(RaftServer.Division division) {
    if (LeaderCommitPush.notifyFollowers(division) && nextRecheck.compareAndSet(-1, 0)) {
      schedule(division, 0);
    }
  }

  private void schedule(RaftServer.Division division, int attempt) {
    try {
      timer.schedule(() -> recheck(division, attempt), RECHECK_MICROS[attempt], TimeUnit.MICROSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      nextRecheck.set(-1);
    }
  }

  private void recheck(RaftServer.Division division, int attempt) {
    boolean again;
    try {
      again = LeaderCommitPush.notifyFollowers(division);
    } catch (RuntimeException stopping) {
      again = false;
    }
    if (again && attempt + 1 < RECHECK_MICROS.length) {
      schedule(division, attempt + 1);
    } else {
      nextRecheck.set(-1);
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
