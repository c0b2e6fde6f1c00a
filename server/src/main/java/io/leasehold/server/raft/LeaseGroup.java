package io.leasehold.server.raft;

import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.server.expiry.ExpiryTicker;
import io.leasehold.server.watch.HistoryCompactor;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.ObjIntConsumer;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One lease group as this node serves it (docs/design/multi-raft.md): its state machine, the door
 * for its proposals and reads (a {@link Replicator} of its own, forwarding to the group's leader),
 * and the expiry ticker that decides expiry of its leases while this node leads it. It hears its
 * state machine as the meta group's {@link AppliedEntries} hears the node's.
 *
 * <p>Its log format follows the meta group's: once this node leads the group, it raises the group's
 * format to the one the meta group applies, which every member's code already knows.
 */
final class LeaseGroup implements GroupDoor, LeaseStateMachine.Listener, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseGroup.class);

  private final int number;
  private final RaftGroupId id;
  private final LeaseStateMachine machine;
  private final ExpiryTicker ticker;
  private volatile RaftServer server;
  private volatile Replicator replicator;
  private volatile HistoryCompactor compactor;

  /** The log format the meta group applies; this group's rises to it. */
  private volatile IntSupplier metaFormat = () -> 0;

  /**
   * Told of every entry the group applies, with the group's number (the node's waiting acquisitions
   * and Resolves, and the group's watch hub).
   */
  private final ObjIntConsumer<ApplyResult> applied;

  /**
   * @param newMachine makes the group's state machine, which reports to the listener it is given
   */
  LeaseGroup(
      int number,
      RaftGroupId id,
      Function<LeaseStateMachine.Listener, LeaseStateMachine> newMachine,
      ExpiryTicker ticker,
      ObjIntConsumer<ApplyResult> applied) {
    this.number = number;
    this.id = id;
    this.ticker = ticker;
    this.applied = applied;
    this.machine = newMachine.apply(this);
  }

  /** Whether the group is connected to the started server ({@link #bind}). */
  boolean bound() {
    return replicator != null;
  }

  @Override
  public int number() {
    return number;
  }

  RaftGroupId id() {
    return id;
  }

  LeaseStateMachine machine() {
    return machine;
  }

  @Override
  public Optional<LeaseCore> localCore() {
    return Optional.of(machine.core());
  }

  /**
   * Connects the group to the started server, its Raft client's door and the meta group, and starts
   * its history compactor, which keeps the group's event history within the node's bounds while
   * this node leads the group.
   */
  void bind(
      RaftServer server,
      Replicator replicator,
      IntSupplier metaFormat,
      BiFunction<
              Function<LogCommand, CompletableFuture<LogReply>>, BooleanSupplier, HistoryCompactor>
          newCompactor) {
    this.server = server;
    this.metaFormat = metaFormat;
    this.replicator = replicator;
    Function<LogCommand, CompletableFuture<LogReply>> proposeHere =
        command -> RaftErrors.mapped(replicator.proposeHere(command));
    ticker.bind(machine, proposeHere, this::isLeader, this::commitIndex);
    this.compactor = newCompactor.apply(proposeHere, this::isLeader);
  }

  /** Proposes through the group's leader (forwarded when another node leads it). */
  @Override
  public CompletableFuture<LogReply> propose(LogCommand command) {
    Replicator r = replicator;
    if (r == null) {
      return CompletableFuture.failedFuture(
          new ConsensusUnavailableException("lease group " + number + " is not started", null));
    }
    return RaftErrors.mapped(r.propose(command));
  }

  /** A read of the group's state on this node: linearizable unless {@code stale}. */
  @Override
  public CompletableFuture<ReadReply> read(ReadQuery query, boolean stale) {
    Replicator r = replicator;
    if (r == null) {
      return CompletableFuture.failedFuture(
          new ConsensusUnavailableException("lease group " + number + " is not started", null));
    }
    return RaftErrors.mapped(r.read(query, stale));
  }

  /** Asks the group's leader for the deadlines its expiry ticker keeps. */
  @Override
  public CompletableFuture<DeadlineReply> leaderDeadlines(DeadlineQuery query) {
    Replicator r = replicator;
    org.apache.ratis.protocol.RaftPeerId leader =
        division().map(d -> d.getInfo().getLeaderId()).orElse(null);
    if (r == null || leader == null) {
      return CompletableFuture.failedFuture(
          new ConsensusUnavailableException(
              "no leader of lease group " + number + " known to ask for deadlines", null));
    }
    return RaftErrors.mapped(r.deadlinesOf(leader, query));
  }

  /** The log format the group applies on this node. */
  @Override
  public int logFormat() {
    return machine.core().logFormat();
  }

  /**
   * Raises the group's log format to {@code format} if it is below (a SetLogFormat entry, which
   * only ever raises): proposed through the group's leader, answered once applied.
   */
  @Override
  public CompletableFuture<Void> raiseFormat(int format) {
    if (logFormat() >= format) {
      return CompletableFuture.completedFuture(null);
    }
    return propose(
            LogCommand.newBuilder()
                .setSetLogFormat(SetLogFormat.newBuilder().setFormat(format))
                .build())
        .thenAccept(reply -> {});
  }

  /** Whether this node knows a leader of the group (itself or another member). */
  @Override
  public boolean hasLeader() {
    return division().map(d -> d.getInfo().getLeaderId() != null).orElse(false);
  }

  boolean isLeader() {
    return division().map(d -> d.getInfo().isLeader()).orElse(false);
  }

  private long commitIndex() {
    return division().map(d -> d.getRaftLog().getLastCommittedIndex()).orElse(-1L);
  }

  private long currentTerm() {
    return division().map(d -> d.getInfo().getCurrentTerm()).orElse(0L);
  }

  /** The group's division on this node's server; empty before the bind or once it is removed. */
  Optional<RaftServer.Division> division() {
    RaftServer s = server;
    if (s == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(s.getDivision(id));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /**
   * Whether this node's replica holds a committed configuration without this node, after one that
   * held it: this node was removed from the group. A replica added empty, still being brought up to
   * date, has not held itself a member yet and is not taken for removed; nor is one whose
   * configuration without this node is not committed (a leader deposed before it committed it), nor
   * one that still leads (a leader removed steps down first).
   */
  boolean removedFromConfiguration(org.apache.ratis.protocol.RaftPeerId self) {
    Optional<RaftServer.Division> d = division();
    if (d.isEmpty()) {
      return false;
    }
    org.apache.ratis.server.RaftConfiguration conf = d.get().getRaftConf();
    if (conf.getAllPeers().stream().anyMatch(p -> p.getId().equals(self))) {
      heldAsMember = true;
      removedSince = 0;
      return false;
    }
    if (!heldAsMember
        || d.get().getInfo().isLeader()
        || conf.getLogEntryIndex() > d.get().getRaftLog().getLastCommittedIndex()) {
      return false;
    }
    // The admin that removed this node asks it to drop the replica at once; this node drops it
    // itself only if that request has not come a while after.
    long now = System.nanoTime();
    if (removedSince == 0) {
      removedSince = now;
      return false;
    }
    return now - removedSince > java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
  }

  /**
   * Whether this replica has applied a configuration without this node: committed, so this node is
   * out of the group, and the replica's data is of no more use here once Ratis closes it (Ratis
   * closes a removed leader's replica on its own, directory and all left on disk).
   */
  boolean appliedOwnRemoval() {
    return appliedOwnRemoval;
  }

  private volatile boolean appliedOwnRemoval;

  @Override
  public void onConfigurationChanged(java.util.List<org.apache.ratis.protocol.RaftPeer> members) {
    RaftServer s = server;
    if (s != null && !members.isEmpty()) {
      appliedOwnRemoval = members.stream().noneMatch(p -> p.getId().equals(s.getId()));
    }
  }

  /** Whether this replica's configuration has held this node, since it was bound. */
  private volatile boolean heldAsMember;

  /** When this replica was first seen removed from its committed configuration, or 0. */
  private volatile long removedSince;

  @Override
  public void onApplied(ApplyResult result) {
    Replicator r = replicator;
    if (r != null) {
      r.applied(result.revision());
    }
    ticker.onApplied(result);
    applied.accept(result, number);
  }

  @Override
  public void onLeaderReady() {
    ticker.promote(currentTerm());
    int format = metaFormat.getAsInt();
    if (format > logFormat()) {
      raiseFormat(format)
          .whenComplete(
              (ok, error) -> {
                if (error != null) {
                  LOG.debug("lease group {}: format not raised yet: {}", number, error.toString());
                }
              });
    }
    Replicator r = replicator;
    if (r != null) {
      r.leaderChanged();
    }
  }

  @Override
  public void onNotLeader() {
    ticker.demote();
  }

  @Override
  public void onLeaderChanged(String leaderId, long term) {
    Replicator r = replicator;
    if (r != null) {
      r.leaderChanged();
    }
  }

  @Override
  public CompletableFuture<DeadlineReply> deadlines(DeadlineQuery query) {
    try {
      return CompletableFuture.completedFuture(ticker.deadlines(query));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public void close() {
    ticker.close();
    HistoryCompactor c = compactor;
    if (c != null) {
      c.close();
    }
    Replicator.closeGroupDoor(replicator, number);
  }
}
