package io.leasehold.server.raft;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.grpc.Context;
import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogFormatQuery;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.server.OverloadedException;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.RaftException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.rpc.CallId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Proposals and reads, on Ratis: the half of {@link Consensus} that carries the log. Its futures
 * fail with Ratis's own exceptions; {@link RaftConsensus} hands them out mapped to the node's
 * ({@link RaftErrors}).
 *
 * <p>Client writes are submitted to the leader: to this server's Raft division directly when it
 * leads (no RPC, no thread hand-off), otherwise over Ratis's client transport; a write that reaches
 * a follower is forwarded rather than refused. Client lease writes go through a {@link
 * WriteBatcher} first, which sends those that arrive while an entry of this node is in flight
 * together, as one entry. Each entry is one Ratis request (this node's client id, its own call id)
 * that is resent unchanged, to whichever node now leads, until it is answered or the request
 * timeout passes; Ratis's retry cache answers a resent request that was already committed with its
 * first reply instead of applying it twice (a new leader accepts requests only once it has applied
 * every entry of earlier terms, so the cache is complete by then).
 *
 * <p>Writes are sent unordered: the API promises no order between concurrent calls, and Ratis's
 * ordered client, which sequences every request of one client id through a sliding window, was the
 * cluster's bottleneck (a third of the leader's throughput).
 *
 * <p>The expiry ticker instead submits to this server only, so a node that lost leadership cannot
 * get its Expire proposals applied elsewhere.
 *
 * <p>A node reaches a group it does not host (lease groups on subsets of the nodes) through the
 * same door: its {@link Seat} has no division here, so every write goes over the transport to the
 * group's members, and a read is answered by a member that has applied the read's barrier.
 */
public final class Replicator implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Replicator.class);

  private final RaftClient client;
  private final Seat seat;
  private final RaftGroupId groupId;
  private final RaftPeerId selfId;
  private final ClientId tickerClientId = ClientId.randomId();
  private final AtomicLong tickerCallId = new AtomicLong();
  private final ClientId writeClientId = ClientId.randomId();
  private final long requestTimeoutNanos;

  /**
   * Writes waiting for the leader. Ratis's client blocks the caller once its own outstanding limit
   * is reached, which under overload parked thousands of gRPC threads; instead a write beyond this
   * bound is refused at once (RESOURCE_EXHAUSTED) and the client backs off.
   */
  private final Semaphore pendingWrites;

  private final int maxPendingWrites;

  private final WriteBatcher batcher;
  private final ReadBarrier barrier;

  /** The highest barrier index a follower has asked Ratis's read index about (below). */
  private final AtomicLong nudged = new AtomicLong(-1);

  private volatile WriteTrace trace;
  private volatile LongConsumer writeTimer = nanos -> {};
  private final HeldResends held = new HeldResends();
  private volatile boolean closed;
  private final PeerTraffic traffic;
  private static final long NOT_READY_PAUSE_MILLIS = 10;
  private static final long CLOSED_STREAM_PAUSE_MILLIS = 2;

  /**
   * What the door needs of its group on this node: the division this node holds of it ({@link
   * #member}), or none, for a group reached through its members ({@link RemoteGroup}).
   */
  interface Seat {
    /** The group's leader as this node knows it, or null. */
    RaftPeerId leader();

    /** The group's members. */
    List<RaftPeerId> members();

    /** Whether this node's division leads the group; false where it holds none. */
    boolean leadsHere();

    /** The last index this node applied of the group: the largest where it holds no replica. */
    long appliedIndex();

    /** The group's log format as this node knows it. */
    int logFormat();

    /** Hands a request to this node's division; fails where it holds none. */
    CompletableFuture<RaftClientReply> submitHere(RaftClientRequest request) throws IOException;

    /** Answers {@code query} from a replica that has applied at least {@code minIndex}. */
    CompletableFuture<ReadReply> query(ReadQuery query, long minIndex);

    /** This node's state machine, asked directly (the leader's deadlines); null where none. */
    LeaseStateMachine machine();

    /** The group's leader answered (or a member named it): for seats that keep no division. */
    default void heardLeader(RaftPeerId leader) {}
  }

  /** The seat of a group this node hosts: its division on {@code server}. */
  static Seat member(
      RaftServer server,
      RaftGroupId groupId,
      RaftPeerId selfId,
      LeaseStateMachine stateMachine,
      LongSupplier wallClockMicros) {
    return new Seat() {
      /** The division, or empty once it is gone (closing). */
      private java.util.Optional<RaftServer.Division> division() {
        try {
          return java.util.Optional.of(server.getDivision(groupId));
        } catch (IOException e) {
          return java.util.Optional.empty();
        }
      }

      @Override
      public RaftPeerId leader() {
        return division().map(d -> d.getInfo().getLeaderId()).orElse(null);
      }

      @Override
      public List<RaftPeerId> members() {
        return division()
            .map(d -> d.getGroup().getPeers().stream().map(RaftPeer::getId).toList())
            .orElse(List.of());
      }

      @Override
      public boolean leadsHere() {
        return division().map(d -> d.getInfo().isLeader()).orElse(false);
      }

      @Override
      public long appliedIndex() {
        return stateMachine.getLastAppliedTermIndex().getIndex();
      }

      @Override
      public int logFormat() {
        return stateMachine.core().logFormat();
      }

      /**
       * Hands a request to this node's Raft division on the calling thread. {@code RaftServer}'s
       * own entry point runs it on Ratis's client pool and blocks the caller until it has been
       * appended: two thread hand-offs and a blocked thread per entry, and the caller is often the
       * thread that completed the previous batch.
       */
      @Override
      public CompletableFuture<RaftClientReply> submitHere(RaftClientRequest request)
          throws IOException {
        RaftServer.Division division = server.getDivision(groupId);
        return division instanceof RaftClientAsynchronousProtocol direct
            ? direct.submitClientRequestAsync(request)
            : server.submitClientRequestAsync(request);
      }

      @Override
      public CompletableFuture<ReadReply> query(ReadQuery query, long minIndex) {
        try {
          return CompletableFuture.completedFuture(
              stateMachine.core().query(query, wallClockMicros.getAsLong()));
        } catch (RuntimeException e) {
          return CompletableFuture.failedFuture(e);
        }
      }

      @Override
      public LeaseStateMachine machine() {
        return stateMachine;
      }
    };
  }

  Replicator(
      RaftClient client,
      Seat seat,
      RaftGroupId groupId,
      RaftPeerId selfId,
      int maxPendingWrites,
      Duration requestTimeout,
      PeerTraffic traffic) {
    this.traffic = traffic;
    this.requestTimeoutNanos = requestTimeout.toNanos();
    this.pendingWrites = new Semaphore(maxPendingWrites);
    this.maxPendingWrites = maxPendingWrites;
    this.client = client;
    this.seat = seat;
    this.groupId = groupId;
    this.selfId = selfId;
    this.batcher = new WriteBatcher(this::send, seat::logFormat, 1);
    this.barrier =
        new ReadBarrier(
            command -> send(command, () -> false),
            this::appliedIndex,
            this::hearCommitSooner,
            requestTimeout);
  }

  /**
   * A follower hears that an entry committed with the leader's next append or heartbeat: on an idle
   * cluster up to half an election timeout after the commit, which a read waiting for its barrier
   * would wait out. A Ratis read index from the leader makes it send heartbeats to every follower
   * now. Asked once per barrier, and only for speed: the read still waits until this node has
   * applied the barrier.
   */
  private void hearCommitSooner(long barrierIndex) {
    long asked = nudged.get();
    if (barrierIndex <= asked || !nudged.compareAndSet(asked, barrierIndex) || isLeaderHere()) {
      return;
    }
    ReadQuery ask =
        ReadQuery.newBuilder().setLogFormat(LogFormatQuery.getDefaultInstance()).build();
    client.async().sendReadOnlyUnordered(message(ask), selfId).whenComplete((reply, error) -> {});
  }

  private boolean isLeaderHere() {
    return seat.leadsHere();
  }

  private long appliedIndex() {
    return seat.appliedIndex();
  }

  /** From the apply path: this node applied up to {@code index}. */
  void applied(long index) {
    barrier.advanced(index);
  }

  /** Writes waiting for an answer now: for tests that must know no resend is left. */
  /** The log format in force in this node's applied state. */
  public int logFormat() {
    return seat.logFormat();
  }

  public int pendingWrites() {
    return maxPendingWrites - pendingWrites.availablePermits();
  }

  /** Replicates a command through the leader and returns the reply of its application. */
  public CompletableFuture<LogReply> propose(LogCommand command) {
    WriteTrace trace = this.trace;
    LongConsumer timer = this.writeTimer;
    long started = System.nanoTime();
    if (trace != null) {
      return proposeNow(command)
          .whenComplete(
              (reply, error) -> {
                if (reply != null) {
                  long entry = revisionOf(reply);
                  long answered = System.nanoTime();
                  trace.record("propose", entry, started);
                  trace.record("answered", entry, answered);
                  timer.accept(answered - started);
                }
              });
    }
    return proposeNow(command)
        .whenComplete(
            (reply, error) -> {
              if (reply != null) {
                timer.accept(System.nanoTime() - started);
              }
            });
  }

  /** Hears how long each answered write took, in nanoseconds, for the node's metrics. */
  void timeWritesWith(LongConsumer timer) {
    this.writeTimer = timer;
  }

  /** Traces every proposal's start and answer by its entry's index ({@code --trace-writes}). */
  void traceWith(WriteTrace trace) {
    this.trace = trace;
  }

  private static long revisionOf(LogReply reply) {
    return switch (reply.getReplyCase()) {
      case ACQUIRE -> reply.getAcquire().getRevision();
      case ACQUIRE_MANY -> reply.getAcquireMany().getRevision();
      case RENEW -> reply.getRenew().getRevision();
      case RELEASE -> reply.getRelease().getRevision();
      case UPDATE -> reply.getUpdate().getRevision();
      default -> -1;
    };
  }

  private CompletableFuture<LogReply> proposeNow(LogCommand command) {
    if (!pendingWrites.tryAcquire()) {
      return CompletableFuture.failedFuture(
          new OverloadedException(
              "more than "
                  + maxPendingWrites
                  + " writes are already waiting for the leader on this node; retry with backoff"));
    }
    Context caller = Context.current();
    CompletableFuture<LogReply> reply;
    try {
      reply = batcher.submit(command, caller::isCancelled);
    } catch (RuntimeException e) {
      pendingWrites.release();
      return CompletableFuture.failedFuture(e);
    }
    return reply.whenComplete((r, error) -> pendingWrites.release());
  }

  /**
   * One Raft request for {@code command}, resent to whichever node leads until answered ({@link
   * #submit}).
   */
  private CompletableFuture<LogReply> send(LogCommand command, BooleanSupplier abandoned) {
    // Call ids from Ratis's own counter: forwarded writes share the client's per-server reply
    // map (keyed by call id alone) with the reads it sends, and a counter of our own collided
    // with theirs ("Entry already exists for key 1 in map ...:ReplyMap"; seen in a soak).
    RaftClientRequest request =
        writeRequest(writeClientId, CallId.getAndIncrement(), message(command), selfId);
    CompletableFuture<RaftClientReply> answer = new CompletableFuture<>();
    submit(request, leaderOrSelf(), System.nanoTime() + requestTimeoutNanos, abandoned, 0, answer);
    return answer.thenApply(Replicator::logReply);
  }

  /**
   * Sends {@code request} (its ids unchanged) to {@code target}; on a redirect or a failure that
   * says nothing was applied yet or that the node is unreachable, tries again at the suggested
   * leader or the next member, after a short pause when there is no fresh hint.
   *
   * <p>No resend once the caller's gRPC call is over ({@code caller} cancelled: its deadline passed
   * or it gave up). A resend the client no longer waits for could still be applied seconds later:
   * the soak saw a registration that the SDK had given up on (and then made again, successfully, on
   * another node) land after the instance was deregistered, bringing it back.
   */
  private void submit(
      RaftClientRequest request,
      RaftPeerId target,
      long deadlineNanos,
      BooleanSupplier abandoned,
      int attempt,
      CompletableFuture<RaftClientReply> answer) {
    RaftClientRequest addressed =
        writeRequest(request.getClientId(), request.getCallId(), request.getMessage(), target);
    long wakesSeen = held.wakes();
    CompletableFuture<RaftClientReply> sent;
    try {
      sent =
          target.equals(selfId)
              ? seat.submitHere(addressed)
              : traffic.isCutOff(target.toString())
                  ? CompletableFuture.failedFuture(new PeerTraffic.CutOffException(target))
                  : client.getClientRpc().sendRequestAsyncUnordered(addressed);
    } catch (IOException | RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenComplete(
        (reply, error) -> {
          Throwable failure =
              error != null ? unwrap(error) : reply.isSuccess() ? null : reply.getException();
          if (failure == null) {
            seat.heardLeader(target);
          }
          if (failure == null
              || !(failure instanceof IOException)
              || failure instanceof StateMachineException) {
            // Answered: a reply, the state machine's own failure, or an error that is not Ratis's
            // "try elsewhere / later" (those are all IOExceptions).
            if (error != null) {
              answer.completeExceptionally(error);
            } else {
              answer.complete(reply);
            }
            return;
          }
          if (!target.equals(selfId) && !(failure instanceof PeerTraffic.CutOffException)) {
            // Ratis's own client does this after every failure; calling its transport directly, we
            // must too. Without it a proxy whose stream had closed (the peer was down for a while)
            // stayed closed, and every write forwarded to that peer failed at once ("is closed")
            // even once it was back and led: the failover benchmark's 5 s kills.
            RaftClientRpc rpc = client.getClientRpc();
            rpc.handleException(target, failure, rpc.shouldReconnect(failure));
          }
          if (System.nanoTime() - deadlineNanos > 0 || abandoned.getAsBoolean() || closed) {
            answer.completeExceptionally(failure);
            return;
          }
          RaftPeerId next;
          long pauseMillis;
          RaftPeer suggested =
              failure instanceof NotLeaderException nle ? nle.getSuggestedLeader() : null;
          if (suggested != null && !suggested.getId().equals(target)) {
            seat.heardLeader(suggested.getId());
            // A fresh hint is followed at once, but two nodes pointing at each other during an
            // election must not be bounced between without a pause.
            next = suggested.getId();
            pauseMillis = attempt < 2 ? 0 : Math.min(200, 25L << Math.min(attempt, 3));
          } else if (failure instanceof NotLeaderException || !(failure instanceof RaftException)) {
            // No leader known yet, or the node could not be reached: the next member, after a
            // pause.
            next = nextPeer(target);
            pauseMillis = Math.min(200, 25L << Math.min(attempt, 3));
          } else if (failure instanceof AlreadyClosedException) {
            // This node's stream to the target had closed after an earlier failure of that peer
            // (reset just above): the target was never asked. Ask it again on a new stream, at
            // once; waiting out a pause here cost a failover up to 200 ms after the leader was
            // ready.
            next = target;
            pauseMillis = CLOSED_STREAM_PAUSE_MILLIS;
          } else if (failure instanceof LeaderNotReadyException) {
            // A new leader applying its term's first entry: ready within a commit, so ask again
            // soon.
            next = target;
            pauseMillis = NOT_READY_PAUSE_MILLIS;
          } else {
            // Stepping down, overloaded: the same node again, after a pause.
            next = leaderOrSelf();
            pauseMillis = Math.min(200, 25L << Math.min(attempt, 3));
          }
          if (LOG.isDebugEnabled()) {
            LOG.debug(
                "write {}: attempt {} at {} failed ({}); next {} after {} ms{}",
                request.getCallId(),
                attempt,
                target,
                failure.toString(),
                next,
                pauseMillis,
                held.wakes() != wakesSeen ? " (a leader change came meanwhile: now)" : "");
          }
          if (pauseMillis == 0) {
            submit(request, next, deadlineNanos, abandoned, attempt + 1, answer);
          } else {
            held.pause(
                pauseMillis,
                wakesSeen,
                woken ->
                    submit(
                        request,
                        woken ? leaderOrSelf() : next,
                        deadlineNanos,
                        abandoned,
                        attempt + 1,
                        answer));
          }
        });
  }

  /** A leader is known, or this node is now a ready leader: resend the held writes now. */
  public void leaderChanged() {
    held.wakeAll();
  }

  /** The leader this node knows of; else this node where it is a member, or the first member. */
  private RaftPeerId leaderOrSelf() {
    RaftPeerId leader = seat.leader();
    if (leader != null) {
      return leader;
    }
    List<RaftPeerId> members = seat.members();
    return members.isEmpty() || members.contains(selfId) ? selfId : first(members);
  }

  private static RaftPeerId first(List<RaftPeerId> members) {
    return members.stream().min(Comparator.comparing(RaftPeerId::toString)).orElseThrow();
  }

  private RaftPeerId nextPeer(RaftPeerId after) {
    List<RaftPeerId> peers =
        seat.members().stream().sorted(Comparator.comparing(RaftPeerId::toString)).toList();
    int i = peers.indexOf(after);
    return peers.isEmpty() ? selfId : peers.get((i + 1) % peers.size());
  }

  private RaftClientRequest writeRequest(
      ClientId clientId, long callId, Message message, RaftPeerId target) {
    return RaftClientRequest.newBuilder()
        .setClientId(clientId)
        .setServerId(target)
        .setGroupId(groupId)
        .setCallId(callId)
        .setMessage(message)
        .setType(RaftClientRequest.writeRequestType())
        .build();
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** Proposes to this server only; fails with NotLeaderException if it is not the leader. */
  public CompletableFuture<LogReply> proposeHere(LogCommand command) {
    RaftClientRequest request =
        writeRequest(tickerClientId, tickerCallId.incrementAndGet(), message(command), selfId);
    try {
      return seat.submitHere(request).thenApply(Replicator::logReply);
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * A read of the group. A linearizable read is answered from a replica that has applied a barrier
   * entry proposed after the read arrived ({@link ReadBarrier}): this node's, where it hosts the
   * group. A stale read at once from what that replica has applied, with the revision it reflects.
   */
  public CompletableFuture<ReadReply> read(ReadQuery query, boolean stale) {
    if (stale) {
      return seat.query(query, 0);
    }
    return barrier.await().thenCompose(index -> seat.query(query, index));
  }

  /**
   * Completes once a barrier proposed after this call has committed and this node has applied it.
   */
  public CompletableFuture<Long> barrier() {
    return barrier.await();
  }

  /**
   * The newest log format {@code member}'s code applies; fails if the member does not know the
   * question (older code).
   */
  public CompletableFuture<Integer> newestLogFormatOf(RaftPeerId member) {
    ReadQuery ask =
        ReadQuery.newBuilder().setLogFormat(LogFormatQuery.getDefaultInstance()).build();
    if (traffic.isCutOff(member.toString())) {
      return CompletableFuture.failedFuture(new PeerTraffic.CutOffException(member));
    }
    return client
        .async()
        .sendReadOnlyUnordered(message(ask), member)
        .thenApply(
            reply -> {
              try {
                return ReadReply.parseFrom(content(reply)).getLogFormat().getNewest();
              } catch (InvalidProtocolBufferException e) {
                throw new CompletionException(e);
              }
            });
  }

  /**
   * Asks {@code leader} for the deadlines its expiry ticker keeps: this node's own state machine
   * when it is the one, else a stale read there (no read index: the leader's listener answers, and
   * refuses unless it still leads and decides expiry).
   */
  public CompletableFuture<DeadlineReply> deadlinesOf(RaftPeerId leader, DeadlineQuery query) {
    Message ask = message(ReadQuery.newBuilder().setDeadlines(query).build());
    CompletableFuture<ByteBuffer> answer;
    if (leader.equals(selfId) && seat.machine() != null) {
      answer = seat.machine().query(ask).thenApply(m -> m.getContent().asReadOnlyByteBuffer());
    } else if (traffic.isCutOff(leader.toString())) {
      return CompletableFuture.failedFuture(new PeerTraffic.CutOffException(leader));
    } else if (deadlineAsks.tryAcquire()) {
      // Within the Raft client's slack above the writes' bound, so an ask never blocks a thread.
      answer = client.async().sendStaleRead(ask, 0, leader).thenApply(Replicator::content);
      answer.whenComplete((r, e) -> deadlineAsks.release());
    } else {
      return CompletableFuture.failedFuture(
          new OverloadedException(MAX_DEADLINE_ASKS + " asks for deadlines are in flight"));
    }
    return answer.thenApply(
        bytes -> {
          try {
            return ReadReply.parseFrom(bytes).getDeadlines();
          } catch (InvalidProtocolBufferException e) {
            throw new CompletionException(e);
          }
        });
  }

  /** Asks for deadlines in flight to the leader at once; beyond them a read shows its estimate. */
  static final int MAX_DEADLINE_ASKS = 8;

  private final Semaphore deadlineAsks = new Semaphore(MAX_DEADLINE_ASKS);

  static Message message(MessageLite m) {
    return Message.valueOf(UnsafeByteOperations.unsafeWrap(m.toByteArray()));
  }

  private static LogReply logReply(RaftClientReply reply) {
    try {
      return LogReply.parseFrom(content(reply));
    } catch (InvalidProtocolBufferException e) {
      throw new CompletionException(e);
    }
  }

  static ByteBuffer content(RaftClientReply reply) {
    if (!reply.isSuccess()) {
      throw new CompletionException(reply.getException());
    }
    return reply.getMessage().getContent().asReadOnlyByteBuffer();
  }

  /** Closes lease group {@code number}'s door, if it has one, saying so if that fails. */
  static void closeGroupDoor(Replicator door, int number) {
    if (door == null) {
      return;
    }
    try {
      door.close();
    } catch (IOException e) {
      LOG.warn("lease group {}: closing its Raft client: {}", number, e.toString());
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    barrier.close();
    client.close();
  }
}
