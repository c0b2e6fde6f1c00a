package io.leasehold.server;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * The node's door into Raft.
 *
 * <p>Client writes go through an embedded Ratis client, which finds the leader and follows its
 * redirects: a write sent to a follower is forwarded to the leader rather than refused. Ratis's
 * retry cache makes the client's own retries safe. The expiry ticker instead submits to this
 * server only, so a node that lost leadership cannot get its Expire proposals applied elsewhere.
 */
public final class Replicator implements AutoCloseable {
  private final RaftClient client;
  private final RaftServer server;
  private final RaftGroupId groupId;
  private final RaftPeerId selfId;
  private final LeaseStateMachine stateMachine;
  private final LongSupplier wallClockMicros;
  private final ClientId tickerClientId = ClientId.randomId();
  private final AtomicLong tickerCallId = new AtomicLong();
  /**
   * Writes waiting for the leader. Ratis's client blocks the caller once its own outstanding
   * limit is reached, which under overload parked thousands of gRPC threads; instead a write
   * beyond this bound is refused at once (RESOURCE_EXHAUSTED) and the client backs off.
   */
  private final java.util.concurrent.Semaphore pendingWrites;
  private final int maxPendingWrites;

  Replicator(RaftClient client, RaftServer server, RaftGroupId groupId, RaftPeerId selfId,
             LeaseStateMachine stateMachine, LongSupplier wallClockMicros, int maxPendingWrites) {
    this.pendingWrites = new java.util.concurrent.Semaphore(maxPendingWrites);
    this.maxPendingWrites = maxPendingWrites;
    this.client = client;
    this.server = server;
    this.groupId = groupId;
    this.selfId = selfId;
    this.stateMachine = stateMachine;
    this.wallClockMicros = wallClockMicros;
  }

  /** Replicates a command through the leader and returns the reply of its application. */
  public CompletableFuture<LogReply> propose(LogCommand command) {
    if (!pendingWrites.tryAcquire()) {
      return CompletableFuture.failedFuture(new OverloadedException("more than " + maxPendingWrites
          + " writes are already waiting for the leader on this node; retry with backoff"));
    }
    CompletableFuture<RaftClientReply> sent;
    try {
      sent = client.async().send(message(command));
    } catch (RuntimeException e) {
      pendingWrites.release();
      return CompletableFuture.failedFuture(e);
    }
    return sent.whenComplete((reply, error) -> pendingWrites.release()).thenApply(Replicator::logReply);
  }

  /** Proposes to this server only; fails with NotLeaderException if it is not the leader. */
  public CompletableFuture<LogReply> proposeHere(LogCommand command) {
    RaftClientRequest request = RaftClientRequest.newBuilder()
        .setClientId(tickerClientId)
        .setServerId(selfId)
        .setGroupId(groupId)
        .setCallId(tickerCallId.incrementAndGet())
        .setMessage(message(command))
        .setType(RaftClientRequest.writeRequestType())
        .build();
    try {
      return server.submitClientRequestAsync(request).thenApply(Replicator::logReply);
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * A read on this node. Linearizable reads wait for Ratis's read index (this node has applied
   * everything committed when the read arrived, confirmed with the leader); stale reads answer
   * from what this node has applied, with the revision they reflect.
   */
  public CompletableFuture<ReadReply> read(ReadQuery query, boolean stale) {
    if (stale) {
      try {
        return CompletableFuture.completedFuture(stateMachine.core().query(query, wallClockMicros.getAsLong()));
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    return client.async().sendReadOnlyUnordered(message(query), selfId).thenApply(reply -> {
      try {
        return ReadReply.parseFrom(content(reply));
      } catch (InvalidProtocolBufferException e) {
        throw new CompletionException(e);
      }
    });
  }

  private static Message message(MessageLite m) {
    return Message.valueOf(UnsafeByteOperations.unsafeWrap(m.toByteArray()));
  }

  private static LogReply logReply(RaftClientReply reply) {
    try {
      return LogReply.parseFrom(content(reply));
    } catch (InvalidProtocolBufferException e) {
      throw new CompletionException(e);
    }
  }

  private static java.nio.ByteBuffer content(RaftClientReply reply) {
    if (!reply.isSuccess()) {
      throw new CompletionException(reply.getException());
    }
    return reply.getMessage().getContent().asReadOnlyByteBuffer();
  }

  @Override
  public void close() throws IOException {
    client.close();
  }
}
