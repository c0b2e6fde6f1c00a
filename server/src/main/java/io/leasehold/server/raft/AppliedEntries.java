package io.leasehold.server.raft;

import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.server.LifecycleLog;
import io.leasehold.server.admin.LogFormatUpgrade;
import io.leasehold.server.expiry.ExpiryTicker;
import io.leasehold.server.metrics.NodeMetrics;
import io.leasehold.server.watch.WatchHub;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.LeaseEvent;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.exceptions.ReadIndexException;
import org.apache.ratis.server.RaftServer;

/**
 * What reacts, on this node, to the state machine: applied entries go to the expiry ticker, the
 * watch hub, the waiting acquisitions, the metrics and the lifecycle log; leadership moves the
 * ticker and the log-format upgrade; leader and configuration changes go to the {@link
 * Consensus.Listener}s. The parts made after the state machine are bound before the Ratis server
 * starts.
 */
public final class AppliedEntries implements LeaseStateMachine.Listener {
  private final CommitClock commitClock;
  private final ReplicationTrace replicationTrace;
  private final ExpiryTicker expiry;
  private final WatchHub hub;

  /** The Acquire calls this node keeps waiting (the API's queue): told of every applied entry. */
  private final Consumer<ApplyResult> acquireWaits;

  private final NodeMetrics metrics;
  private final LifecycleLog events;
  private volatile RaftConsensus consensus;
  private volatile NodeRaft raft;
  private volatile Replicator replicator;
  private volatile LogFormatUpgrade logFormatUpgrade;
  private volatile DivisionClosure divisionClosure;

  public AppliedEntries(
      CommitClock commitClock,
      ReplicationTrace replicationTrace,
      ExpiryTicker expiry,
      WatchHub hub,
      Consumer<ApplyResult> acquireWaits,
      NodeMetrics metrics,
      LifecycleLog events) {
    this.commitClock = commitClock;
    this.replicationTrace = replicationTrace;
    this.expiry = expiry;
    this.hub = hub;
    this.acquireWaits = acquireWaits;
    this.metrics = metrics;
    this.events = events;
  }

  public void bind(
      RaftConsensus consensus, LogFormatUpgrade logFormatUpgrade, DivisionClosure divisionClosure) {
    this.consensus = consensus;
    this.raft = consensus.raft();
    this.replicator = consensus.replicator();
    this.logFormatUpgrade = logFormatUpgrade;
    this.divisionClosure = divisionClosure;
  }

  @Override
  public void onApplied(ApplyResult result) {
    NodeRaft r = raft;
    RaftServer.Division d = r == null ? null : r.startedDivision();
    if (d != null) {
      commitClock.applied(d); // first: before the watch hub can hand the events on
    }
    Replicator rep = replicator;
    if (rep != null) {
      rep.applied(result.revision());
    }
    expiry.onApplied(result);
    hub.onApplied(result);
    acquireWaits.accept(result);
    replicationTrace.applied(result.revision());
    logExpiries(result);
  }

  @Override
  public void onApplyTime(long nanos) {
    metrics.applied(nanos);
  }

  @Override
  public void onLeaderChanged(String leaderId, long term) {
    RaftConsensus c = consensus;
    if (c != null) {
      c.leaderChanged(leaderId, term);
    }
    events.event("leader_changed", "leader", leaderId, "term", term);
    wakeHeldWrites();
  }

  @Override
  public void onConfigurationChanged(List<RaftPeer> members) {
    NodeRaft r = raft;
    if (r != null) {
      r.knowMembers(members);
    }
    RaftConsensus c = consensus;
    if (c != null) {
      c.membersChanged(members);
    }
  }

  @Override
  public void onDivisionClosed(RoleInfoProto roleInfo) {
    divisionClosure.closedByRatis(roleInfo);
  }

  @Override
  public void onSnapshotTaken(long term, long index, long bytes) {
    metrics.snapshotTaken();
    events.event("snapshot_taken", "term", term, "index", index, "bytes", bytes);
  }

  @Override
  public void onLeaderReady() {
    expiry.promote(currentTerm());
    logFormatUpgrade.promote();
    RaftConsensus c = consensus;
    if (c != null) {
      c.metaLeaderReady();
    }
    events.event("leader_ready", "term", raft.division().getInfo().getCurrentTerm());
    wakeHeldWrites();
  }

  @Override
  public void onNotLeader() {
    expiry.demote();
    logFormatUpgrade.demote();
  }

  @Override
  public CompletableFuture<Void> confirmLeadership(long term) {
    // Asked only by members running an older version, during a rolling upgrade: a barrier entry
    // committed while this node still leads the term answers it (ReadBarrier says why).
    RaftServer.Division d = raft.division();
    if (!leads(d, term)) {
      return CompletableFuture.failedFuture(
          new ReadIndexException(d.getId() + " does not lead term " + term));
    }
    return replicator
        .barrier()
        .thenAccept(
            index -> {
              if (!leads(d, term)) {
                throw new CompletionException(
                    new ReadIndexException(d.getId() + " no longer leads term " + term));
              }
            });
  }

  /** This node's term, or 0 if it cannot be read (only reads of extended leases show it). */
  private long currentTerm() {
    try {
      NodeRaft r = raft;
      return r == null ? 0 : r.division().getInfo().getCurrentTerm();
    } catch (RuntimeException e) {
      return 0;
    }
  }

  @Override
  public CompletableFuture<DeadlineReply> deadlines(DeadlineQuery query) {
    try {
      return CompletableFuture.completedFuture(expiry.deadlines(query));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static boolean leads(RaftServer.Division d, long term) {
    return d.getInfo().isLeader() && d.getInfo().getCurrentTerm() == term;
  }

  /**
   * Writes this node holds through an election go to the new leader at once, not after their pause.
   */
  private void wakeHeldWrites() {
    Replicator r = replicator;
    if (r != null) {
      r.leaderChanged();
    }
  }

  private void logExpiries(ApplyResult result) {
    for (LeaseEvent e : result.events()) {
      if (e.type() == LeaseEvent.Type.EXPIRED || e.type() == LeaseEvent.Type.SESSION_EXPIRED) {
        events.event(
            "lease_expired",
            "name",
            e.name(),
            "holder",
            e.lease().getHolder(),
            "token",
            e.lease().getToken(),
            "revision",
            e.revision(),
            "session",
            e.lease().getSession());
      }
    }
  }
}
