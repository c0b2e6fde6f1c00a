package io.leasehold.server.raft;

import com.google.protobuf.InvalidProtocolBufferException;
import io.leasehold.proto.v1.DeadlineQuery;
import io.leasehold.proto.v1.DeadlineReply;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogFormatQuery;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.proto.v1.SetLogFormat;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.core.LogFormat;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease group this node is not a member of (lease groups on subsets of the nodes,
 * docs/design/multi-raft.md): reached through its members with a Ratis client of the group, as this
 * node's own proposals reach a leader elsewhere. Nothing is decided here: each command is decided
 * in the group's log, wherever it was sent from.
 *
 * <p>Its members are learned from the members themselves: the first meta-group member that hosts
 * the group answers Ratis's group-info request with the group's current configuration and whom it
 * follows. They are learned again once no member answers.
 *
 * <p>A linearizable read proposes a barrier entry through the group's leader (shared by the reads
 * that arrive meanwhile, as on a member) and is then answered by a member that has applied it:
 * Ratis's stale read with the barrier's index as its minimum refuses on a member that has not. So
 * the answer holds every write acknowledged before the read arrived, whoever leads.
 */
final class RemoteGroup implements GroupDoor, Replicator.Seat, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RemoteGroup.class);

  /** Between two asks of a read that found no member ready to answer it. */
  private static final long READ_RETRY_PAUSE_MILLIS = 20;

  private final int number;
  private final RaftGroupId id;
  private final RaftPeerId selfId;

  /** Asks a node about a group over the meta group's client (Ratis group info). */
  private final Function<RaftPeerId, GroupInfoReply> groupInfo;

  /** The meta group's other members: whom to ask where the group is. */
  private final Supplier<List<RaftPeerId>> metaMembers;

  /** Makes the group's door once its members are known. */
  private final Function<RaftGroup, Replicator> newReplicator;

  private final PeerTraffic traffic;
  private final Duration requestTimeout;
  private final ExecutorService asker;

  private volatile List<RaftPeerId> members = List.of();
  private volatile RaftPeerId leader;
  private volatile int format = LogFormat.FIRST;
  private volatile RaftClient client;
  private volatile Replicator replicator;

  /** The door once the members are known; guarded by this. */
  private CompletableFuture<Replicator> door;

  private volatile boolean closed;

  /**
   * @param groupInfo asks a node about the group; throws if the node does not host it
   * @param metaMembers the meta group's other members
   * @param newClient makes a Raft client of the group as learned
   * @param newReplicator makes the door of the group from its client and this seat
   */
  RemoteGroup(
      int number,
      RaftGroupId id,
      RaftPeerId selfId,
      Function<RaftPeerId, GroupInfoReply> groupInfo,
      Supplier<List<RaftPeerId>> metaMembers,
      Function<RaftGroup, RaftClient> newClient,
      Function<RaftClient, Function<Replicator.Seat, Replicator>> newReplicator,
      PeerTraffic traffic,
      Duration requestTimeout) {
    this.number = number;
    this.id = id;
    this.selfId = selfId;
    this.groupInfo = groupInfo;
    this.metaMembers = metaMembers;
    this.newReplicator =
        group -> {
          RaftClient c = newClient.apply(group);
          this.client = c;
          return newReplicator.apply(c).apply(this);
        };
    this.traffic = traffic;
    this.requestTimeout = requestTimeout;
    this.asker =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "leasehold-remote-group-" + number);
              t.setDaemon(true);
              return t;
            });
  }

  @Override
  public int number() {
    return number;
  }

  RaftGroupId id() {
    return id;
  }

  /** The group's members, learned first if they are not known yet. */
  CompletableFuture<List<RaftPeerId>> learnedMembers() {
    return door().thenApply(r -> members);
  }

  /** The group's door, learning its members first if they are not known yet. */
  private CompletableFuture<Replicator> door() {
    Replicator r = replicator;
    if (r != null) {
      return CompletableFuture.completedFuture(r);
    }
    synchronized (this) {
      if (door == null || door.isCompletedExceptionally()) {
        door = CompletableFuture.supplyAsync(this::learn, asker);
      }
      return door;
    }
  }

  /**
   * Asks the meta group's members, one after another, for the group's configuration; the first that
   * hosts it answers. Runs on the asker thread (Ratis's group-info call blocks).
   */
  private Replicator learn() {
    List<String> asked = new ArrayList<>();
    for (RaftPeerId peer : metaMembers.get()) {
      if (closed) {
        break;
      }
      if (peer.equals(selfId) || traffic.isCutOff(peer.toString())) {
        continue;
      }
      asked.add(peer.toString());
      GroupInfoReply info;
      try {
        info = groupInfo.apply(peer);
      } catch (RuntimeException e) {
        continue; // not a member of the group, or not reachable
      }
      if (info == null || !info.isSuccess() || info.getGroup().getPeers().isEmpty()) {
        continue;
      }
      RaftGroup group = info.getGroup();
      members =
          group.getPeers().stream()
              .map(RaftPeer::getId)
              .sorted(Comparator.comparing(RaftPeerId::toString))
              .toList();
      leaderFrom(peer, info.getRoleInfoProto()).ifPresent(l -> leader = l);
      Replicator r = replicator;
      if (r == null) {
        r = newReplicator.apply(group);
        replicator = r;
      }
      LOG.info(
          "{}: lease group {} is served through its members {} (leader {})",
          selfId,
          number,
          members,
          leader);
      return r;
    }
    throw new CompletionException(
        new ConsensusUnavailableException(
            "no member of lease group " + number + " answered (asked " + asked + "); retry", null));
  }

  private static Optional<RaftPeerId> leaderFrom(RaftPeerId answered, RoleInfoProto role) {
    if (role.getRole() == RaftPeerRole.LEADER) {
      return Optional.of(answered);
    }
    if (role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()) {
      String id = role.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8();
      return id.isEmpty() ? Optional.empty() : Optional.of(RaftPeerId.valueOf(id));
    }
    return Optional.empty();
  }

  /**
   * The group's configuration as its leader holds it (the group's latest, with each member's
   * priority): the known leader is asked first, then each member, and whom they follow. What it
   * learns becomes the group's members and leader here. Blocks (Ratis's group-info call); for the
   * membership admin's thread.
   */
  List<RaftPeer> leaderConfiguration() throws IOException {
    try {
      learnedMembers().join();
    } catch (CompletionException e) {
      throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
    }
    List<RaftPeerId> order = new ArrayList<>();
    if (leader != null) {
      order.add(leader);
    }
    for (RaftPeerId m : members) {
      if (!order.contains(m)) {
        order.add(m);
      }
    }
    for (int i = 0; i < order.size() && !closed; i++) {
      RaftPeerId peer = order.get(i);
      GroupInfoReply info;
      try {
        info = groupInfo.apply(peer);
      } catch (RuntimeException e) {
        continue; // not reachable, or no longer a member
      }
      if (info == null || !info.isSuccess()) {
        continue;
      }
      if (info.getRoleInfoProto().getRole() == RaftPeerRole.LEADER) {
        adopt(peer, info);
        return List.copyOf(info.getGroup().getPeers());
      }
      Optional<RaftPeerId> followed = leaderFrom(peer, info.getRoleInfoProto());
      if (followed.isPresent() && !order.contains(followed.get())) {
        order.add(i + 1, followed.get());
      }
    }
    throw new ConsensusUnavailableException(
        "no leader of lease group " + number + " answered (asked " + order + "); retry", null);
  }

  /**
   * Takes the group's members and leader from a member's answer, and makes the new members'
   * addresses known to the group's client.
   */
  private void adopt(RaftPeerId answered, GroupInfoReply info) {
    List<RaftPeer> peers = List.copyOf(info.getGroup().getPeers());
    if (peers.isEmpty()) {
      return;
    }
    List<RaftPeerId> now =
        peers.stream()
            .map(RaftPeer::getId)
            .sorted(Comparator.comparing(RaftPeerId::toString))
            .toList();
    RaftClient c = client;
    if (c != null && !now.equals(members)) {
      c.getClientRpc().addRaftPeers(peers);
      LOG.info("{}: lease group {}'s members are now {}", selfId, number, now);
    }
    members = now;
    leaderFrom(answered, info.getRoleInfoProto()).ifPresent(l -> leader = l);
  }

  /**
   * Asks the group's leader (else a member) for its members, at most once every {@link
   * #REFRESH_NANOS}, so that a change of the group's members is learned here: whom the SDK is sent
   * to, and whom reads ask.
   */
  void refreshMembers() {
    long now = System.nanoTime();
    long last = membersAsked.get();
    if (replicator == null
        || now - last < REFRESH_NANOS
        || !membersAsked.compareAndSet(last, now)) {
      return;
    }
    try {
      asker.execute(
          () -> {
            try {
              leaderConfiguration();
            } catch (IOException | RuntimeException e) {
              LOG.debug("lease group {}: members not refreshed: {}", number, e.toString());
            }
          });
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      // Closed meanwhile.
    }
  }

  /** How often a node asks again who a group it is not a member of is made of. */
  private static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final java.util.concurrent.atomic.AtomicLong membersAsked =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime());

  /** Learns the group's log format, once, for the batcher: batches go out from format 2. */
  private CompletableFuture<Void> learnFormat() {
    if (format >= LogFormat.BATCHES) {
      return CompletableFuture.completedFuture(null);
    }
    return query(
            ReadQuery.newBuilder().setLogFormat(LogFormatQuery.getDefaultInstance()).build(), 0)
        .thenAccept(reply -> format = Math.max(format, reply.getLogFormat().getCurrent()));
  }

  @Override
  public CompletableFuture<LogReply> propose(LogCommand command) {
    // The door stops resending once the caller's gRPC call is over, which it learns from the
    // call's context: carried over when learning the members finishes on another thread.
    io.grpc.Context caller = io.grpc.Context.current();
    return RaftErrors.mapped(
        door()
            .thenCompose(r -> learnFormat().handle((ok, e) -> r))
            .thenCompose(
                r -> {
                  io.grpc.Context previous = caller.attach();
                  try {
                    return r.propose(command);
                  } finally {
                    caller.detach(previous);
                  }
                }));
  }

  @Override
  public CompletableFuture<ReadReply> read(ReadQuery query, boolean stale) {
    return RaftErrors.mapped(door().thenCompose(r -> r.read(query, stale)));
  }

  @Override
  public CompletableFuture<DeadlineReply> leaderDeadlines(DeadlineQuery query) {
    return RaftErrors.mapped(
        door()
            .thenCompose(
                r -> {
                  RaftPeerId l = leader;
                  return l == null
                      ? CompletableFuture.failedFuture(
                          new ConsensusUnavailableException(
                              "no leader of lease group " + number + " known to ask for deadlines",
                              null))
                      : r.deadlinesOf(l, query);
                }));
  }

  @Override
  public CompletableFuture<Void> raiseFormat(int raised) {
    if (format >= raised) {
      return CompletableFuture.completedFuture(null);
    }
    return propose(
            LogCommand.newBuilder()
                .setSetLogFormat(SetLogFormat.newBuilder().setFormat(raised))
                .build())
        .thenAccept(reply -> format = Math.max(format, raised));
  }

  @Override
  public boolean hasLeader() {
    if (leader == null) {
      if (replicator == null) {
        door(); // learn the members, and whom they follow, for the next time asked
      } else {
        askLeader();
      }
    }
    return leader != null;
  }

  /** Asks the members whom they follow, at most once a second, for the next time asked. */
  private void askLeader() {
    long now = System.nanoTime();
    long last = leaderAsked.get();
    if (now - last < TimeUnit.SECONDS.toNanos(1) || !leaderAsked.compareAndSet(last, now)) {
      return;
    }
    try {
      asker.execute(
          () -> {
            for (RaftPeerId member : members) {
              if (leader != null || closed) {
                return;
              }
              if (traffic.isCutOff(member.toString())) {
                continue;
              }
              try {
                GroupInfoReply info = groupInfo.apply(member);
                if (info != null && info.isSuccess()) {
                  leaderFrom(member, info.getRoleInfoProto()).ifPresent(l -> leader = l);
                }
              } catch (RuntimeException e) {
                // Not reachable: the next member.
              }
            }
          });
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      // Closed meanwhile.
    }
  }

  private final java.util.concurrent.atomic.AtomicLong leaderAsked =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - TimeUnit.SECONDS.toNanos(1));

  @Override
  public Optional<LeaseCore> localCore() {
    return Optional.empty();
  }

  // ---- the seat: no division here ----

  @Override
  public RaftPeerId leader() {
    return leader;
  }

  @Override
  public List<RaftPeerId> members() {
    return members;
  }

  @Override
  public boolean leadsHere() {
    return false;
  }

  @Override
  public long appliedIndex() {
    // No replica here: a barrier counts once it committed; the member that answers the read must
    // have applied it (query).
    return Long.MAX_VALUE;
  }

  @Override
  public int logFormat() {
    return format;
  }

  @Override
  public CompletableFuture<RaftClientReply> submitHere(RaftClientRequest request)
      throws IOException {
    throw new IOException("lease group " + number + " has no member on " + selfId);
  }

  @Override
  public LeaseStateMachine machine() {
    return null;
  }

  @Override
  public void heardLeader(RaftPeerId leader) {
    this.leader = leader;
  }

  /**
   * Asks the leader (else a member) for the answer once it has applied {@code minIndex}, then the
   * other members in turn, until one answers or the request timeout passes.
   */
  @Override
  public CompletableFuture<ReadReply> query(ReadQuery query, long minIndex) {
    RaftPeerId first = leader;
    if (first == null && !members.isEmpty()) {
      first = members.get(0);
    }
    if (first == null) {
      return CompletableFuture.failedFuture(
          new ConsensusUnavailableException(
              "no member of lease group " + number + " is known yet; retry", null));
    }
    CompletableFuture<ReadReply> answer = new CompletableFuture<>();
    ask(query, minIndex, first, System.nanoTime() + requestTimeout.toNanos(), answer);
    return answer;
  }

  private void ask(
      ReadQuery query,
      long minIndex,
      RaftPeerId target,
      long deadline,
      CompletableFuture<ReadReply> answer) {
    RaftClient c = client;
    CompletableFuture<RaftClientReply> sent =
        c == null
            ? CompletableFuture.failedFuture(new IOException("no client of lease group " + number))
            : traffic.isCutOff(target.toString())
                ? CompletableFuture.failedFuture(new PeerTraffic.CutOffException(target))
                : c.async().sendStaleRead(Replicator.message(query), minIndex, target);
    sent.whenComplete(
        (reply, error) -> {
          Throwable failure =
              error != null
                  ? RaftErrors.unwrap(error)
                  : reply.isSuccess() ? null : reply.getException();
          if (failure == null) {
            try {
              answer.complete(ReadReply.parseFrom(Replicator.content(reply)));
            } catch (InvalidProtocolBufferException | RuntimeException e) {
              answer.completeExceptionally(e);
            }
            return;
          }
          if (!(failure instanceof IOException)
              || failure instanceof StateMachineException
              || closed
              || System.nanoTime() - deadline > 0) {
            answer.completeExceptionally(failure);
            return;
          }
          // Not applied that far yet, not reachable, or gone: the next member, after a pause.
          List<RaftPeerId> all = members;
          int i = all.indexOf(target);
          RaftPeerId next = all.isEmpty() ? target : all.get((i + 1) % all.size());
          CompletableFuture.delayedExecutor(READ_RETRY_PAUSE_MILLIS, TimeUnit.MILLISECONDS)
              .execute(() -> ask(query, minIndex, next, deadline, answer));
        });
  }

  @Override
  public void close() {
    closed = true;
    asker.shutdownNow();
    Replicator.closeGroupDoor(replicator, number);
  }
}
