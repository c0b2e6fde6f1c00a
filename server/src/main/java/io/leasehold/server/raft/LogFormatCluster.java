package io.leasehold.server.raft;

import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.server.admin.LogFormatUpgrade;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * The cluster as the log-format upgrade sees it: the format applied here, the other members, a
 * proposal.
 */
final class LogFormatCluster implements LogFormatUpgrade.Cluster {
  private final LeaseStateMachine stateMachine;
  private final NodeRaft raft;
  private final Replicator replicator;
  private final BooleanSupplier isLeader;

  LogFormatCluster(
      LeaseStateMachine stateMachine,
      NodeRaft raft,
      Replicator replicator,
      BooleanSupplier isLeader) {
    this.stateMachine = stateMachine;
    this.raft = raft;
    this.replicator = replicator;
    this.isLeader = isLeader;
  }

  @Override
  public int currentFormat() {
    return stateMachine.core().logFormat();
  }

  @Override
  public boolean isLeader() {
    return isLeader.getAsBoolean();
  }

  @Override
  public List<String> otherMembers() {
    return raft.otherMembers();
  }

  @Override
  public CompletableFuture<Integer> newestFormatOf(String member) {
    return replicator.newestLogFormatOf(RaftPeerId.valueOf(member));
  }

  @Override
  public CompletableFuture<?> propose(int format) {
    return replicator.proposeHere(
        LogCommand.newBuilder()
            .setSetLogFormat(SetLogFormat.newBuilder().setFormat(format))
            .build());
  }
}
