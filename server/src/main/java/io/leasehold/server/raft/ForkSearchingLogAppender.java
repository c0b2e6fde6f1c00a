package io.leasehold.server.raft;

import org.apache.ratis.grpc.server.GrpcLogAppender;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;

/**
 * Ratis's gRPC log appender, except that it finds where a follower's log parts from the leader's
 * in about log2(n) round trips instead of n ({@link ForkSearch}).
 *
 * <p>An INCONSISTENCY answer that moved the search also clears the follower's error count. Ratis
 * counts these answers as errors and, after ten in a row, sleeps between tries as it does for an
 * unreachable follower; but a follower that answers is reachable, and the sleeps only stretch the
 * repair. An answer that does not move the search keeps counting, so a follower that keeps
 * answering the same thing still gets the back-off.
 *
 * <p>It also passes Ratis's notices of a new commit index on to the node's {@link CommitClock}.
 */
public final class ForkSearchingLogAppender extends GrpcLogAppender {
  private final ForkSearch search = new ForkSearch();
  private final CommitClock commitClock;

  public ForkSearchingLogAppender(RaftServer.Division server, LeaderState leaderState, FollowerInfo follower, CommitClock commitClock) {
    super(server, leaderState, follower);
    this.commitClock = commitClock;
  }

  /** Ratis calls this on every appender just after the leader's commit index moves (and on other events); see {@link CommitClock}. */
  @Override
  public void notifyLogAppender() {
    // The commit time first: the signal may hand the core to this appender's thread.
    commitClock.observe(getRaftLog().getLastCommittedIndex());
    super.notifyLogAppender();
  }

  @Override
  protected long getNextIndexForInconsistency(long requestFirstIndex, long replyNextIndex) {
    long answered = super.getNextIndexForInconsistency(requestFirstIndex, replyNextIndex);
    long floor = Math.max(getFollower().getMatchIndex() + 1, getRaftLog().getStartIndex());
    ForkSearch.Step step = search.next(answered, floor);
    if (step.progressed()) {
      getFollower().getErrorState().updateErrorCount(false);
    }
    return step.nextIndex();
  }
}
