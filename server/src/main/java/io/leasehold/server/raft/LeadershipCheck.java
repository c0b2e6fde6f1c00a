package io.leasehold.server.raft;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.ReadIndexException;
import org.apache.ratis.server.RaftConfiguration;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.LogAppender;

/**
 * Confirms that this node still leads, by a round of answers from a majority that began after
 * the check did: what a linearizable read on the leader must wait for.
 *
 * <p>Ratis 3.3's read index skips that round when nothing has committed since the last confirmed
 * one ({@code ReadIndexHeartbeats}: "the readIndex is already acknowledged before"). A leader cut
 * off from the others commits nothing, so it answered every read at once from its old state while
 * the majority elected a new leader and moved on: the fault tests saw a Get report no lease
 * milliseconds after that lease was renewed, and Resolve miss a registered instance. This check
 * does not take the short cut.
 *
 * <p>Each log appender (one per follower, created by {@link LeaseholdRpcType}) reports every
 * AppendEntries answer here. An answer other than NOT_LEADER means the follower was in this
 * leader's term when it answered; an answer to a request with a call id at or after the one the
 * appender was at when the check began was sent after the check began. Once such answers, with
 * this node, make a majority of the configuration (of both configurations during a change), no
 * other leader can have committed anything before the check began: it would have needed a
 * majority in a later term, and one of them would then have refused this term.
 */
public final class LeadershipCheck implements AutoCloseable {
  /** The key under which Ratis's factory finds this node's check ({@code Parameters}). */
  static final String PARAMETER = LeadershipCheck.class.getName();

  /** Highest call id answered in each term, per appender (each appender counts its own call ids). */
  private record Ack(long term, long callId) {}

  private final Map<LogAppender, Ack> acks = new ConcurrentHashMap<>();
  private final Map<RaftPeerId, LogAppender> appenders = new ConcurrentHashMap<>();
  private final List<Pending> pending = new ArrayList<>();
  private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
    Thread t = new Thread(r, "leadership-check-timeout");
    t.setDaemon(true);
    return t;
  });

  public LeadershipCheck() {
    // One timeout per read on the leader, nearly all cancelled within milliseconds: drop them
    // from the queue at once rather than keep each for the whole timeout.
    timer.setRemoveOnCancelPolicy(true);
  }

  private final class Pending {
    final RaftServer.Division division;
    final long term;
    final Map<LogAppender, Long> from;
    final CompletableFuture<Void> done = new CompletableFuture<>();

    Pending(RaftServer.Division division, long term, Map<LogAppender, Long> from) {
      this.division = division;
      this.term = term;
      this.from = from;
    }

    boolean acknowledged(RaftPeerId id) {
      if (id.equals(division.getId())) {
        return true;
      }
      LogAppender a = appenders.get(id);
      Long min = a == null ? null : from.get(a);
      Ack ack = a == null ? null : acks.get(a);
      return min != null && ack != null && ack.term() == term && ack.callId() >= min;
    }
  }

  /** Called by the factory for each appender it creates: the current one for its follower. */
  void register(LogAppender appender) {
    LogAppender old = appenders.put(appender.getFollowerId(), appender);
    if (old != null) {
      acks.remove(old);
    }
  }

  /** Called by each appender's leader state for every answer it gets. */
  void onReply(LogAppender appender, AppendEntriesReplyProto reply) {
    if (reply.getResult() == AppendEntriesReplyProto.AppendResult.NOT_LEADER) {
      return;
    }
    long callId = reply.getServerReply().getCallId();
    acks.merge(appender, new Ack(reply.getTerm(), callId), (a, b) ->
        b.term() > a.term() || (b.term() == a.term() && b.callId() > a.callId()) ? b : a);
    List<Pending> ready = new ArrayList<>();
    synchronized (pending) {
      for (Pending p : pending) {
        if (majority(p)) {
          ready.add(p);
        }
      }
      pending.removeAll(ready);
    }
    ready.forEach(this::finish);
  }

  /**
   * Completes once a majority has answered this node, as leader in its current term, after this
   * call; fails if this node does not lead, stops leading, or gets no majority within {@code timeout}.
   */
  public CompletableFuture<Void> confirm(RaftServer.Division division, Duration timeout) {
    return confirm(division, division.getInfo().getCurrentTerm(), timeout);
  }

  /** As {@link #confirm(RaftServer.Division, Duration)}, for a given term: fails if this node does not lead that term. */
  public CompletableFuture<Void> confirm(RaftServer.Division division, long term, Duration timeout) {
    if (!division.getInfo().isLeader() || division.getInfo().getCurrentTerm() != term) {
      return CompletableFuture.failedFuture(new ReadIndexException(division.getId() + " does not lead term " + term
          + " (its term is " + division.getInfo().getCurrentTerm() + ")"));
    }
    Map<LogAppender, Long> from = new HashMap<>();
    for (RaftPeer p : voters(division.getRaftConf())) {
      LogAppender a = appenders.get(p.getId());
      if (a != null && !p.getId().equals(division.getId())) {
        from.put(a, a.getCallId());
      }
    }
    Pending p = new Pending(division, term, from);
    boolean now;
    synchronized (pending) {
      now = majority(p);
      if (!now) {
        pending.add(p);
      }
    }
    if (now) {
      finish(p);
      return p.done;
    }
    from.keySet().forEach(LogAppender::triggerHeartbeat);
    ScheduledFuture<?> timeoutTask = timer.schedule(() -> {
      boolean removed;
      synchronized (pending) {
        removed = pending.remove(p);
      }
      if (removed) {
        p.done.completeExceptionally(new ReadIndexException(division.getId()
            + " could not confirm with a majority within " + timeout.toMillis() + " ms that it still leads term " + term));
      }
    }, timeout.toMillis(), TimeUnit.MILLISECONDS);
    p.done.whenComplete((ok, failed) -> timeoutTask.cancel(false));
    return p.done;
  }

  private void finish(Pending p) {
    if (p.division.getInfo().isLeader() && p.division.getInfo().getCurrentTerm() == p.term) {
      p.done.complete(null);
    } else {
      p.done.completeExceptionally(new ReadIndexException(p.division.getId() + " no longer leads term " + p.term));
    }
  }

  private static boolean majority(Pending p) {
    RaftConfiguration conf = p.division.getRaftConf();
    return majorityOf(conf.getCurrentPeers(), p) && (conf.getPreviousPeers().isEmpty() || majorityOf(conf.getPreviousPeers(), p));
  }

  private static boolean majorityOf(Collection<RaftPeer> voters, Pending p) {
    long yes = voters.stream().filter(v -> p.acknowledged(v.getId())).count();
    return yes * 2 > voters.size();
  }

  private static List<RaftPeer> voters(RaftConfiguration conf) {
    List<RaftPeer> all = new ArrayList<>(conf.getCurrentPeers());
    all.addAll(conf.getPreviousPeers());
    return all;
  }

  @Override
  public void close() {
    timer.shutdownNow();
    List<Pending> left;
    synchronized (pending) {
      left = new ArrayList<>(pending);
      pending.clear();
    }
    left.forEach(p -> p.done.completeExceptionally(new ReadIndexException("the node is shutting down")));
  }
}
