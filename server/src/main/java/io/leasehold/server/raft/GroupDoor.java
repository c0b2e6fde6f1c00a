package io.leasehold.server.raft;

import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.statemachine.core.LeaseCore;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * How a node reaches one lease group: as one of its members ({@link LeaseGroup}) or, where lease
 * groups sit on subsets of the nodes and this node is not a member, through the members ({@link
 * RemoteGroup}). Either way each command is decided in the group's own log.
 */
interface GroupDoor {
  int number();

  /** Proposes through the group's leader; answered once applied there. */
  CompletableFuture<LogReply> propose(LogCommand command);

  /** A read of the group's state: linearizable unless {@code stale}. */
  CompletableFuture<ReadReply> read(ReadQuery query, boolean stale);

  /** Asks the group's leader for the deadlines its expiry ticker keeps. */
  CompletableFuture<DeadlineReply> leaderDeadlines(DeadlineQuery query);

  /** Raises the group's log format to {@code format} if it is below; answered once applied. */
  CompletableFuture<Void> raiseFormat(int format);

  /** The group's log format as this node knows it (its replica's, where it hosts the group). */
  int logFormat();

  /** Whether this node knows a leader of the group. */
  boolean hasLeader();

  /** This node's replica of the group's state, where it hosts the group. */
  Optional<LeaseCore> localCore();
}
