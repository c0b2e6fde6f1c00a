package io.leasehold.server;

import io.leasehold.server.metrics.NodeMetrics;
import io.leasehold.server.watch.WatchHub;
import io.leasehold.statemachine.core.Counters;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.util.Locale;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;

/** What the metrics endpoint reads of a node: the apply loop's counters, the watch hub and the Raft view. */
final class NodeMetricsSource implements NodeMetrics.Source {
  private final Supplier<LeaseStateMachine> stateMachine;
  private final WatchHub watchHub;
  private final Supplier<RaftServer.Division> division;
  private final BooleanSupplier serving;

  NodeMetricsSource(Supplier<LeaseStateMachine> stateMachine, WatchHub watchHub, Supplier<RaftServer.Division> division,
                    BooleanSupplier serving) {
    this.stateMachine = stateMachine;
    this.watchHub = watchHub;
    this.division = division;
    this.serving = serving;
  }

  @Override
  public Counters.Snapshot counters() {
    return stateMachine.get().core().counters().snapshot();
  }

  @Override
  public long liveLeases() {
    return NodeMetrics.orElse(() -> (long) stateMachine.get().core().liveLeases(), 0L);
  }

  @Override
  public int watchers() {
    return watchHub.watchers();
  }

  @Override
  public long watchMessages() {
    return watchHub.eventMessages();
  }

  @Override
  public long watchSharedMessages() {
    return watchHub.sharedMessages();
  }

  @Override
  public int watchGroups() {
    return watchHub.watchGroups();
  }

  @Override
  public NodeMetrics.RaftView raft() {
    return NodeMetrics.orElse(() -> {
      RaftServer.Division d = division.get();
      DivisionInfo info = d.getInfo();
      return new NodeMetrics.RaftView(info.getCurrentRole().name().toLowerCase(Locale.ROOT), info.getCurrentTerm(),
          d.getRaftLog().getLastCommittedIndex(), info.getLastAppliedIndex(),
          stateMachine.get().latestSnapshotFile().map(s -> s.getIndex()).orElse(0L),
          d.getRaftConf().getCurrentPeers().size(), info.getLeaderId() != null);
    }, new NodeMetrics.RaftView("unknown", 0, 0, 0, 0, 0, false));
  }

  @Override
  public boolean serving() {
    return serving.getAsBoolean();
  }
}
