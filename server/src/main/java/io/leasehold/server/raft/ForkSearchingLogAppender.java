package io.leasehold.server.raft;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.server.GrpcLogAppender;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLogIOException;
import org.apache.ratis.util.TimeDuration;
import org.apache.ratis.util.Timestamp;

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
 * <p>It tells a follower of a new commit index that no append carried to it within
 * {@code pushDelay}, in an AppendEntries of its own with no entries (a <em>commit push</em>).
 * When nothing new is to be sent, Ratis tells the follower of a commit only at the next
 * heartbeat, which under load it sends without a previous entry, so the follower cannot take its
 * commit index at all: a follower's state machine (and its watchers) would lag a lone write by up
 * to a heartbeat interval. A push names as its previous entry one the follower holds (below), and
 * the follower takes the commit index only up to there. It goes on the same ordered stream as the
 * appends (the node turns off Ratis's separate heartbeat channel, see {@link #pushesCommits}); the
 * follower checks the previous entry as for any append and takes the commit index at once. A push
 * is due when it would move the follower's commit index past the last push and past what the
 * follower has reported, and goes out once it has been due for {@code pushDelay}: while writes
 * keep coming, the next append carries the commit index and the follower's answer reports it, so
 * the push is never sent. Pushing at once (a delay of zero) cost every write two more messages a
 * follower, the largest item of a lone write's CPU on a small machine.
 *
 * <p>A follower takes a push's commit index only up to what its log has synced, so a push that
 * reaches it before an entry's sync gives it less than it carried. That happens to the slower
 * follower: the faster one's acknowledgement commits the entry, and the push to the slower one
 * overtakes its sync. Its answer then reports a commit index below the entries it has since
 * acknowledged, and no later push would carry more (the commit index has not moved past the last
 * push): on an idle cluster it applied the entry only at the next heartbeat, most of a second
 * later. So once the last push has been answered, a follower that reports a commit index below
 * one it has acknowledged and the leader has committed is pushed again; it has synced what it
 * acknowledged, so that push gives it at least that much. At most one such push is in flight.
 *
 * <p>Before the appender waits, it checks whether a push is due, and if so sends it instead. Ratis
 * wakes it with an {@code AwaitForSignal}, which forgets a signal sent while nobody waits, and the
 * answer that makes a push due (above) often comes right after another, while the appender is
 * still handling that one: without the check that push would wait for the next heartbeat.
 *
 * <p>Which entry a push names. Raft's heartbeat names the entry before the follower's next index,
 * which under load is usually still in flight to it. Ratis's follower (with {@code
 * raft.server.log.append-entries.compose.enabled}, the default) queues an append's entries for its
 * log and checks later appends' previous entries against that queue, but takes the commit index of
 * an append without entries at once, without waiting for the queue; it caps it only at the entry
 * the append names and at what its log has synced. A push naming an entry still queued let a
 * rejoining follower (in the short fault schedule) take a commit index over its own stale,
 * divergent tail before the queued append had replaced it, and apply that tail: its state parted
 * from the other replicas'. Ratis's own heartbeats name no previous entry while appends are in
 * flight, for the same reason. So a push names the entry before the follower's next index only once
 * the follower has acknowledged an entry of this leader's term ({@link #logIsThisLeaders}): to take
 * that entry it replaced whatever tail it had from there, and everything after it came from this
 * leader, so all its log holds, synced or queued, is the leader's. Until then a push names the
 * follower's match index, the last entry it has acknowledged, which is in its log and the same as
 * the leader's, and carries the commit index only up to there.
 *
 * <p>It also passes Ratis's notices of a new commit index on to the node's {@link CommitClock}, and
 * reports each push to the node's {@link ReplicationTrace}.
 */
public final class ForkSearchingLogAppender extends GrpcLogAppender {
  private final ForkSearch search = new ForkSearch();
  private final CommitClock commitClock;
  private final ReplicationTrace trace;
  private final boolean pushCommits;
  // The fields below are used only by the appender's own thread, which builds and sends the
  // requests, except where they say otherwise.
  /**
   * A match index seen to name an entry of this leader's term (Long.MAX_VALUE until then): from
   * there on the follower's log holds only this leader's entries. An appender serves one term.
   */
  private long matchedThisTerm = Long.MAX_VALUE;
  /** The highest commit index a push has let this follower take (the leader's commit index, or the entry it named if lower). */
  private long pushed = -1;
  /** An append with entries has just gone out: follow it with a push if the commit index moved. */
  private boolean pushNext;
  /** The request just built is a push: send it without the batching wait ({@code wait-time.min}). */
  private boolean sendNow;
  /**
   * When the last push was built (null before the first). Ratis sends it after this, and sent
   * every earlier request before this, so an answer to a request sent at or after it is the push's
   * answer or a later request's. Written by the appender's thread, read by the answers' thread.
   */
  private volatile Timestamp pushBuiltAt;
  /**
   * The {@link #pushBuiltAt} of the last push seen answered. Checked as each answer is taken
   * ({@link #notifyLogAppender}), because the follower's record of the last answered request
   * can go back: a push's answer does not wait for the follower's sync, so it may come before the
   * answer to the append sent ahead of it.
   */
  private volatile Timestamp answeredPush;
  /** The leader's commit index when the last push was built. */
  private long pushBuiltCommit = -1;
  /** How long a push must have been due before it goes out (an append may carry the commit meanwhile). */
  private final long pushDelayNanos;
  /** Since when a push has been due ({@link System#nanoTime}), or -1 while none is. */
  private long dueSince = -1;

  /** What a turn of Ratis's loop (build, send, wait) sent. */
  private enum Sent { NOTHING, HEARTBEAT, ENTRIES, PUSH }

  /** What this turn has sent so far: set as requests are built, reset as the turn ends ({@link #getWaitTimeMs}). */
  private Sent sent = Sent.NOTHING;

  public ForkSearchingLogAppender(RaftServer.Division server, LeaderState leaderState, FollowerInfo follower, CommitClock commitClock,
                                  ReplicationTrace trace, Duration pushDelay) {
    super(server, leaderState, follower);
    this.commitClock = commitClock;
    this.trace = trace;
    this.pushCommits = pushesCommits(server);
    this.pushDelayNanos = pushDelay.toNanos();
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
      sent = Sent.HEARTBEAT;
      return super.newAppendEntriesRequest(callId, heartbeat);
    }
    if (followUp && pushDue() && ripe()) {
      return push(callId);
    }
    AppendEntriesRequestProto request = super.newAppendEntriesRequest(callId, false);
    if (request == null) {
      // Nothing new to send; Ratis's loop came here because the follower's commit index is behind.
      return pushDue() && ripe() ? push(callId) : null;
    }
    pushNext = request.getEntriesCount() > 0;
    sent = pushNext ? Sent.ENTRIES : Sent.HEARTBEAT;  // Ratis sends a due heartbeat even when asked for entries
    if (pushNext) {
      dueSince = -1;  // this append carries the commit index: a push is due only if none follows within the delay
    }
    return request;
  }

  /** What a push could let this follower take now: the commit index, up to the entry it would name. */
  private long pushable() {
    return Math.min(getRaftLog().getLastCommittedIndex(), pushPrevious());
  }

  /** The index of the entry a push names now (class comment): before the next index, or the match index until the follower's log is known to be this leader's. */
  private long pushPrevious() {
    long match = getFollower().getMatchIndex();
    return logIsThisLeaders(match) ? Math.max(match, getFollower().getNextIndex() - 1) : match;
  }

  /**
   * Whether the follower, having acknowledged up to {@code match}, has acknowledged an entry of
   * this leader's term. Terms never fall along a log, so once one match index names such an
   * entry, every higher one does too.
   */
  private boolean logIsThisLeaders(long match) {
    if (match >= matchedThisTerm) {
      return true;
    }
    TermIndex matched = match < 0 ? null : getRaftLog().getTermIndex(match);
    if (matched != null && matched.getTerm() == getServer().getInfo().getCurrentTerm()) {
      matchedThisTerm = match;
      return true;
    }
    return false;
  }

  /**
   * A push would move this follower's commit index past the last push and past what it has
   * reported; or the last push has been answered and did not (class comment), while the follower
   * has acknowledged a committed entry beyond what it reports.
   */
  private boolean pushDue() {
    return pushDue(pushable(), pushed, getFollower().getCommitIndex(), getFollower().getMatchIndex(), lastPushAnswered());
  }

  /**
   * The rule of {@link #pushDue()}: a push could let the follower take {@code pushable}; the last
   * one carried {@code pushed}; the follower has reported commit index {@code followerCommit} and
   * acknowledged up to {@code followerMatch}.
   */
  static boolean pushDue(long pushable, long pushed, long followerCommit, long followerMatch, boolean lastPushAnswered) {
    if (pushable <= followerCommit) {
      return false;
    }
    if (pushable > pushed) {
      return true;
    }
    return lastPushAnswered && Math.min(pushable, followerMatch) > followerCommit;
  }

  private boolean lastPushAnswered() {
    Timestamp last = pushBuiltAt;
    return last != null && answeredPush == last;
  }

  /** After each answer (and on other events): notes whether the last push has been answered. */
  private void noteAnsweredPush() {
    Timestamp last = pushBuiltAt;
    if (last == null || answeredPush == last) {
      return;
    }
    Timestamp answered = getFollower().getLastRespondedAppendEntriesSendTime();
    if (answered != null && answered.compareTo(last) >= 0) {
      answeredPush = last;
    }
  }

  /** Whether the due push has been due for the push delay (and since when it is due, noted on first asking). */
  private boolean ripe() {
    return delayLeft() == 0;
  }

  /** Nanoseconds until the due push may go out. */
  private long delayLeft() {
    long now = System.nanoTime();
    if (dueSince < 0) {
      dueSince = now;
    }
    return Math.max(0, pushDelayNanos - (now - dueSince));
  }

  private AppendEntriesRequestProto push(long callId) {
    long named = pushPrevious();
    TermIndex previous = getPrevious(named + 1);
    if (previous == null) {
      return null; // nothing acknowledged yet, or purged into a snapshot: Ratis's own requests see to those
    }
    AppendEntriesRequestProto request = getLeaderState().newAppendEntriesRequestProto(getFollower(), List.of(), previous, callId);
    pushed = Math.min(request.getLeaderCommit(), named);
    dueSince = -1;
    pushBuiltAt = Timestamp.currentTime();
    pushBuiltCommit = getRaftLog().getLastCommittedIndex();
    sent = Sent.PUSH;
    trace.pushBuilt(getFollowerId(), request);
    sendNow = true;
    return request;
  }

  @Override
  public long getWaitTimeMs() {
    Sent turn = sent;
    sent = Sent.NOTHING;
    if (pushCommits && pushDue()) {
      if (sendPushNow(turn)) {
        long left = delayLeft();
        if (left == 0) {
          return 0;
        }
        // Not yet: wake when it may go out (an answer or a new entry wakes the loop sooner).
        pushNext = false;
        return Math.min(super.getWaitTimeMs(), Math.max(1, TimeUnit.NANOSECONDS.toMillis(left + 999_999)));
      }
    } else {
      dueSince = -1;
    }
    pushNext = false;
    return super.getWaitTimeMs();
  }

  /**
   * Whether a due push goes out without waiting: after an append with entries (the follow-up
   * push), or when it became due while this thread was busy (class comment). Every turn that ends
   * this way makes progress, so the loop never spins: not after a heartbeat (Ratis sends those
   * when too many requests are pending, and would again), not after a push unless the commit
   * index has moved since, and not when the push cannot be built (its entry purged; Ratis sees to
   * that follower).
   */
  private boolean sendPushNow(Sent turn) {
    if (turn == Sent.HEARTBEAT || (turn == Sent.PUSH && getRaftLog().getLastCommittedIndex() <= pushBuiltCommit)) {
      return false;
    }
    return getPrevious(pushPrevious() + 1) != null;  // what push() names
  }

  @Override
  protected TimeDuration getRemainingWaitTime() {
    if (sendNow) {
      sendNow = false;
      return TimeDuration.ZERO;
    }
    return super.getRemainingWaitTime();
  }

  /**
   * Ratis calls this on every appender just after the leader's commit index moves, on this
   * appender after it has taken each of the follower's answers, and on other events; see
   * {@link CommitClock}.
   */
  @Override
  public void notifyLogAppender() {
    // The commit time first: the signal may hand the core to this appender's thread.
    commitClock.observe(getRaftLog().getLastCommittedIndex());
    noteAnsweredPush();
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
