package io.leasehold.server.raft;

import java.util.List;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.server.GrpcLogAppender;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLogIOException;
import org.apache.ratis.util.TimeDuration;

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
 * <p>It tells a follower of each new commit index at once, in an AppendEntries of its own with no
 * entries (a <em>commit push</em>). Ratis's follower takes an append's commit index only after it
 * has written and synced that append's entries, so a commit carried by an append with entries
 * reaches the follower's state machine (and its watchers) one follower sync later; and when
 * nothing new is to be sent, Ratis tells the follower of a commit only at the next heartbeat,
 * which under load it sends without a previous entry, so the follower cannot take its commit
 * index at all. A push names the entry before the follower's next index as its previous entry, as
 * Raft's heartbeat does. It goes on the same ordered stream as the appends (the node turns off
 * Ratis's separate heartbeat channel, see {@link #pushesCommits}), so the follower has every entry
 * it names by the time it reads it, checks the previous entry as for any append, and takes the
 * commit index at once, up to what its log has synced. A push goes out right after each append
 * with entries, and whenever the commit index moves with nothing new to send; in both cases only
 * if the commit index has moved past the last push and past what the follower has reported.
 *
 * <p>It also passes Ratis's notices of a new commit index on to the node's {@link CommitClock}.
 */
public final class ForkSearchingLogAppender extends GrpcLogAppender {
  private final ForkSearch search = new ForkSearch();
  private final CommitClock commitClock;
  private final boolean pushCommits;
  // The fields below are used only by the appender's own thread, which builds and sends the requests.
  /** The highest commit index a push has carried to this follower. */
  private long pushed = -1;
  /** An append with entries has just gone out: follow it with a push if the commit index moved. */
  private boolean pushNext;
  /** The request just built is a push: send it without the batching wait ({@code wait-time.min}). */
  private boolean sendNow;

  public ForkSearchingLogAppender(RaftServer.Division server, LeaderState leaderState, FollowerInfo follower, CommitClock commitClock) {
    super(server, leaderState, follower);
    this.commitClock = commitClock;
    this.pushCommits = pushesCommits(server);
  }

  /**
   * Whether this server's appenders push commits: only when Ratis sends heartbeats on the appends'
   * own stream. On a separate heartbeat channel a push could reach the follower before the append
   * holding the entry it names, and the follower would answer INCONSISTENCY and be sent back.
   */
  static boolean pushesCommits(RaftServer.Division server) {
    return !GrpcConfigKeys.Server.heartbeatChannel(server.getRaftServer().getProperties());
  }

  @Override
  public AppendEntriesRequestProto newAppendEntriesRequest(long callId, boolean heartbeat) throws RaftLogIOException {
    boolean followUp = pushNext;
    pushNext = false;
    sendNow = false;
    if (!pushCommits || heartbeat) {
      return super.newAppendEntriesRequest(callId, heartbeat);
    }
    if (followUp && pushDue()) {
      return push(callId);
    }
    AppendEntriesRequestProto request = super.newAppendEntriesRequest(callId, false);
    if (request == null) {
      // Nothing new to send; Ratis's loop came here because the follower's commit index is behind.
      return pushDue() ? push(callId) : null;
    }
    pushNext = request.getEntriesCount() > 0;
    return request;
  }

  /** The commit index moved past what this follower has been pushed and has reported. */
  private boolean pushDue() {
    long committed = getRaftLog().getLastCommittedIndex();
    return committed > pushed && committed > getFollower().getCommitIndex();
  }

  private AppendEntriesRequestProto push(long callId) {
    TermIndex previous = getPrevious(getFollower().getNextIndex());
    if (previous == null) {
      return null; // purged into a snapshot: the follower needs that first, which Ratis's own requests see to
    }
    AppendEntriesRequestProto request = getLeaderState().newAppendEntriesRequestProto(getFollower(), List.of(), previous, callId);
    pushed = request.getLeaderCommit();
    sendNow = true;
    return request;
  }

  @Override
  public long getWaitTimeMs() {
    if (pushNext && pushDue()) {
      return 0; // the follow-up push goes out at once
    }
    pushNext = false;
    return super.getWaitTimeMs();
  }

  @Override
  protected TimeDuration getRemainingWaitTime() {
    if (sendNow) {
      sendNow = false;
      return TimeDuration.ZERO;
    }
    return super.getRemainingWaitTime();
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
