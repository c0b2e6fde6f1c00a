package org.apache.ratis.server.impl;

import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LogAppenderBase;
import org.apache.ratis.server.raftlog.RaftLog;

/**
 * Tells followers a new commit index now rather than with the next entry or heartbeat.
 *
 * <p>Ratis 3.3 advances the leader's commit index without telling anyone. A follower learns it
 * from the leader's next AppendEntries: the next write's, or the next heartbeat's (half the
 * minimum election timeout away). So a follower applied, and streamed to its watchers, each write
 * one write later than the leader, and the last write of a burst up to a heartbeat interval
 * later. Ratis's log-metadata entries would carry the commit index, but they double the
 * replicated, fsynced entries, so we turn them off and instead trigger a heartbeat (an empty
 * AppendEntries, which carries the commit index) to each follower that has been sent every entry
 * and has answered them, but has not yet been told they are committed. A follower that still has
 * entries coming learns the commit index with them, so under load this adds few messages.
 *
 * <p>The leader's appenders are reachable only through package-private Ratis internals, hence
 * this class in Ratis's package. It is compiled against the Ratis version the build pins: an
 * upgrade that changes these internals fails the build, and {@code
 * ThreeNodeClusterTest.followersApplyAnIsolatedWriteWithoutWaitingForTheNextHeartbeat} checks the
 * effect.
 */
public final class LeaderCommitPush {
  private LeaderCommitPush() {}

  /**
   * On the leader: a heartbeat to every follower that has been sent and has answered every entry
   * but not been told the commit index. Returns true if some follower is behind on the commit
   * index but still has entries being sent or answered: the caller should look again shortly.
   */
  public static boolean notifyFollowers(RaftServer.Division division) {
    if (!(division instanceof RaftServerImpl server)) {
      return false;
    }
    LeaderStateImpl leader = server.getRole().getLeaderState().orElse(null);
    if (leader == null) {
      return false;
    }
    RaftLog log = server.getRaftLog();
    long committed = log.getLastCommittedIndex();
    long next = log.getNextIndex();
    boolean[] lookAgain = {false};
    leader.getLogAppenders().forEach(appender -> {
      FollowerInfo follower = appender.getFollower();
      if (follower.getCommitIndex() < committed) {
        // A heartbeat built while an append is unanswered carries no previous entry, and the
        // follower then takes none of its commit index: wait for the answer.
        if (follower.getNextIndex() >= next && !(appender instanceof LogAppenderBase base && base.hasPendingDataRequests())) {
          appender.triggerHeartbeat();
        } else {
          lookAgain[0] = true;
        }
      }
    });
    return lookAgain[0];
  }
}
