package io.leasehold.server.raft;

import io.leasehold.server.NodeConfig;
import io.leasehold.server.Peer;
import io.leasehold.server.expiry.ExpiryTicker;
import io.leasehold.server.tls.NodeTls;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import io.leasehold.statemachine.store.RocksDbStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.ObjIntConsumer;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetrics;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.metrics.RaftLogMetricsBase;
import org.apache.ratis.server.metrics.SegmentedRaftLogMetrics;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.ExitUtils;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's Ratis server on the peer port, its Raft group and division, and the Raft clients that
 * reach the other members.
 */
final class NodeRaft implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeRaft.class);

  static {
    // Ratis ends the whole JVM (System.exit) when its gRPC server cannot start, the Raft port
    // being taken, say. Told by an exception instead, start() closes the node and says why; an
    // application embedding a node keeps running, and so does a test JVM.
    ExitUtils.disableSystemExit();
  }

  /** Call ids of this node's leadership hand-overs. */
  private static final AtomicLong HAND_OVER_CALL_IDS = new AtomicLong();

  /** How long a close waits for Ratis to close its RPC services. */
  static final Duration RPC_CLOSE_WAIT = Duration.ofSeconds(20);

  private final NodeConfig config;
  private final NodeTls tls;
  private final RaftGroupId groupId;
  private final RaftGroup group;
  private final LeaseGroups leaseGroups;
  private final AppendCounter appends = new AppendCounter();
  private final RaftServer server;

  /** The Replicator's Raft client: it must know every member to forward writes to the leader. */
  private final RaftClient client;

  /** Every Raft client made here; each learns of members added since the group formed. */
  private final List<RaftClient> clients = new CopyOnWriteArrayList<>();

  /**
   * Set once the Ratis server has started; read by the apply thread and when Ratis closes the
   * division.
   */
  private volatile RaftServer.Division startedDivision;

  NodeRaft(
      NodeConfig config,
      NodeTls tls,
      LeaseStateMachine stateMachine,
      ReplicationTrace trace,
      PeerTraffic traffic,
      LongSupplier wallClockMicros,
      RocksDbStore.Memory storeMemory,
      Supplier<ExpiryTicker> newTicker,
      ObjIntConsumer<ApplyResult> leaseGroupApplied)
      throws IOException {
    this.config = config;
    this.tls = tls;
    this.groupId = groupId(config.clusterName());
    this.leaseGroups =
        new LeaseGroups(config, wallClockMicros, storeMemory, newTicker, leaseGroupApplied);
    // With N lease groups the meta group's priority names the peer at N mod peers, the one that
    // leads the fewest lease groups (lease group k's names the one at k - 1): ClusterAdmin keeps
    // the same spread after membership changes. Without lease groups it has no priorities.
    int formed = leaseGroups.formed();
    this.group =
        RaftGroup.valueOf(
            groupId,
            formed > 0
                ? LeaseGroups.members(
                    config.peers(),
                    LeaseGroups.metaLeadSlot(config.peers(), formed, leaseGroups.size()))
                : config.peers().stream().map(Members::raftPeer).toList());
    // A joining node has no group of its own: it never stands for election, and learns the
    // configuration from the leader once a member adds it. A restart recovers it from disk.
    RaftGroup initialGroup = config.join() ? RaftGroup.valueOf(groupId) : group;
    // Ratis's gRPC as Ratis ships it, with the trace's and the fault hook's interceptors.
    RaftProperties properties = RaftSettings.server(config);
    Parameters parameters = new Parameters();
    RaftServerHooks.install(parameters, trace, traffic, appends);
    RaftSettings.peerTls(tls).ifPresent(conf -> GrpcConfigKeys.TLS.setConf(parameters, conf));
    this.server =
        RaftServer.newBuilder()
            .setServerId(selfId())
            .setGroup(initialGroup)
            .setProperties(properties)
            .setParameters(parameters)
            // The meta group's state machine is the node's; a lease group's is its own.
            .setStateMachineRegistry(
                id -> id.equals(groupId) ? stateMachine : leaseGroups.machine(id))
            .setOption(RaftStorage.StartupOption.RECOVER)
            .build();
    this.client = writeClient(group);
  }

  /**
   * A Raft client for the writes and reads of {@code raftGroup} (the meta group or a lease group),
   * retrying within the request timeout.
   */
  RaftClient writeClient(RaftGroup raftGroup) {
    return newClient(
        raftGroup,
        RaftSettings.client(config),
        RetryPolicies.retryUpToMaximumCountWithFixedSleep(
            (int) Math.max(1, config.requestTimeout().toMillis() / 200),
            TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)));
  }

  /** A Raft client of the whole group, speaking the peers' TLS, kept told of the members. */
  RaftClient newClient(RaftProperties properties, RetryPolicy retries) {
    return newClient(group, properties, retries);
  }

  /** As {@link #newClient(RaftProperties, RetryPolicy)}, of {@code raftGroup}. */
  RaftClient newClient(RaftGroup raftGroup, RaftProperties properties, RetryPolicy retries) {
    RaftClient c =
        RaftClient.newBuilder()
            .setProperties(properties)
            .setParameters(RaftSettings.clientParameters(tls))
            .setRaftGroup(raftGroup)
            .setClientId(ClientId.randomId())
            .setRetryPolicy(retries)
            .build();
    clients.add(c);
    RaftServer.Division started =
        startedDivision; // after the add, so no change falls between the two
    if (started != null) {
      c.getClientRpc().addRaftPeers(started.getRaftConf().getCurrentPeers());
    }
    return c;
  }

  void start() throws IOException {
    try {
      server.start();
    } catch (ExitUtils.ExitException e) {
      throw new IOException(
          "the Raft port "
              + config.self().peerAddress()
              + " could not be opened: "
              + (e.getCause() == null ? e.getMessage() : rootCause(e.getCause())),
          e);
    }
    leaseGroups.recovered();
    startedDivision = division();
    knowMembers(division().getRaftConf().getCurrentPeers());
    // A joining node adds its lease groups empty, as its meta group: a member adds it to each.
    leaseGroups.addMissing(server, config.join());
  }

  /** AppendEntries requests (and their bytes) this node's Raft server received from leaders. */
  AppendCounter appends() {
    return appends;
  }

  /**
   * How many times the meta group's log worker on this node flushed its Raft log to disk (each
   * flush forces the log file), from Ratis's own log metrics; -1 before the division starts.
   */
  long logFlushes() {
    RaftServer.Division d = startedDivision;
    if (d == null) {
      return -1;
    }
    return MetricRegistries.global()
        .get(
            new MetricRegistryInfo(
                d.getMemberId().toString(),
                RatisMetrics.RATIS_APPLICATION_NAME_METRICS,
                RaftLogMetricsBase.RATIS_LOG_WORKER_METRICS,
                RaftLogMetricsBase.RATIS_LOG_WORKER_METRICS_DESC))
        .map(r -> r.counter(SegmentedRaftLogMetrics.RAFT_LOG_FLUSH_COUNT).getCount())
        .orElse(-1L);
  }

  /** The lease groups' ids and numbers. */
  LeaseGroups leaseGroups() {
    return leaseGroups;
  }

  /**
   * Members added since the group formed become reachable through every client made here (for
   * forwarded writes, admin calls, the dashboard's probes); this runs before any write reaches
   * them.
   */
  void knowMembers(Collection<RaftPeer> members) {
    for (RaftClient c : clients) {
      c.getClientRpc().addRaftPeers(members);
    }
  }

  /** The Raft group of a cluster name: every member derives the same one. */
  static RaftGroupId groupId(String clusterName) {
    return RaftGroupId.valueOf(groupUuid(clusterName));
  }

  /** The id of a cluster's Raft group, which names its directory under {@code <data-dir>/raft}. */
  static UUID groupUuid(String clusterName) {
    return UUID.nameUUIDFromBytes(("leasehold:" + clusterName).getBytes(StandardCharsets.UTF_8));
  }

  RaftServer server() {
    return server;
  }

  RaftClient client() {
    return client;
  }

  RaftGroupId groupId() {
    return groupId;
  }

  RaftPeerId selfId() {
    return RaftPeerId.valueOf(config.id());
  }

  /**
   * The division once the server has started, or null before (the apply thread asks during
   * recovery).
   */
  RaftServer.Division startedDivision() {
    return startedDivision;
  }

  RaftServer.Division division() {
    try {
      return server.getDivision(groupId);
    } catch (IOException e) {
      throw new IllegalStateException("Raft group " + groupId + " is not on this server", e);
    }
  }

  /** The client address of the leader this node knows of, for redirect hints. */
  Optional<String> leaderClientAddress() {
    RaftPeerId leader = division().getInfo().getLeaderId();
    return leader == null ? Optional.empty() : clientAddressOf(leader.toString());
  }

  /**
   * The gRPC API address of a member, from the Raft configuration (members added later) or {@code
   * --peers}.
   */
  Optional<String> clientAddressOf(String memberId) {
    RaftPeerId id = RaftPeerId.valueOf(memberId);
    try {
      for (RaftPeer p : division().getRaftConf().getCurrentPeers()) {
        if (p.getId().equals(id)) {
          return Members.clientAddress(p, config);
        }
      }
    } catch (RuntimeException e) {
      // Closing: fall back to the static configuration.
    }
    return config.peer(memberId).map(Peer::clientAddress);
  }

  /** The other members' ids in the current configuration. */
  List<String> otherMembers() {
    return division().getRaftConf().getCurrentPeers().stream()
        .map(p -> p.getId().toString())
        .filter(id -> !id.equals(config.id()))
        .toList();
  }

  /**
   * Before a clean stop: hands each group this node leads to its most caught-up follower, so its
   * clients wait for one vote instead of an election timeout and an election. Ratis transfers only
   * to a member of the highest priority, so a group whose priority names this node is left to elect
   * as it would have. Returns once every transfer ended, or after {@code bound}; a transfer that
   * failed only means that group elects.
   *
   * @return the groups handed over, each as {@code group uuid -> new leader}
   */
  Map<String, String> handOverLeadership(Duration bound) {
    Map<String, String> handed = new ConcurrentHashMap<>();
    List<CompletableFuture<?>> transfers = new ArrayList<>();
    for (RaftGroupId id : server.getGroupIds()) {
      RaftServer.Division d;
      try {
        d = server.getDivision(id);
      } catch (IOException gone) {
        continue;
      }
      Optional<RaftPeerId> target = transferee(d);
      if (target.isEmpty()) {
        continue;
      }
      try {
        transfers.add(
            server
                .transferLeadershipAsync(
                    new TransferLeadershipRequest(
                        ClientId.randomId(),
                        selfId(),
                        id,
                        HAND_OVER_CALL_IDS.incrementAndGet(),
                        target.get(),
                        bound.toMillis()))
                .thenAccept(
                    reply -> {
                      if (reply.isSuccess()) {
                        handed.put(id.getUuid().toString(), target.get().toString());
                      } else {
                        LOG.info(
                            "{}: group {} not handed to {}: {}",
                            config.id(),
                            id.getUuid(),
                            target.get(),
                            reply.getException() == null
                                ? "refused"
                                : reply.getException().getMessage());
                      }
                    }));
      } catch (IOException | RuntimeException e) {
        LOG.info("{}: group {} not handed over: {}", config.id(), id.getUuid(), e.toString());
      }
    }
    try {
      CompletableFuture.allOf(transfers.toArray(CompletableFuture[]::new))
          .get(bound.toMillis() + 100, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // Each transfer logged its own outcome; the rest elect as they would have.
    }
    return Map.copyOf(handed);
  }

  /**
   * Whom {@code d} would hand its leadership to: when this node leads it, the follower with the
   * highest match index among those of the highest priority that answered within an election
   * timeout.
   */
  private Optional<RaftPeerId> transferee(RaftServer.Division d) {
    DivisionInfo info = d.getInfo();
    RoleInfoProto role = info.getRoleInfoProto();
    if (!info.isLeader() || !role.hasLeaderInfo()) {
      return Optional.empty();
    }
    long[] match = info.getFollowerMatchIndices();
    List<ServerRpcProto> followers = role.getLeaderInfo().getFollowerInfoList();
    if (match == null || match.length != followers.size()) {
      return Optional.empty();
    }
    Collection<RaftPeer> peers = d.getRaftConf().getCurrentPeers();
    int highest = peers.stream().mapToInt(RaftPeer::getPriority).max().orElse(0);
    RaftPeerId best = null;
    long bestMatch = -1;
    for (int i = 0; i < followers.size(); i++) {
      RaftPeerId id = RaftPeerId.valueOf(followers.get(i).getId().getId());
      boolean eligible =
          peers.stream().anyMatch(p -> p.getId().equals(id) && p.getPriority() == highest);
      boolean heard =
          followers.get(i).getLastRpcElapsedTimeMs() <= config.electionTimeoutMin().toMillis();
      if (eligible && heard && match[i] > bestMatch) {
        best = id;
        bestMatch = match[i];
      }
    }
    return Optional.ofNullable(best);
  }

  /**
   * Closes the server; the Replicator closes the client it was given. Ratis closes the divisions
   * (and so the state machine) first, then its gRPC services, whose termination it awaits without a
   * bound: a peer's call still open kept a node's close waiting for minutes in a rolling-restart
   * test. The close goes on after {@link #RPC_CLOSE_WAIT}.
   */
  @Override
  public void close() {
    Thread closer =
        new Thread(
            () -> {
              try {
                server.close();
              } catch (IOException e) {
                LOG.warn("closing Raft server: {}", e.toString());
              }
            },
            "leasehold-raft-close-" + config.id());
    closer.setDaemon(true);
    closer.start();
    try {
      closer.join(RPC_CLOSE_WAIT.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (closer.isAlive()) {
      LOG.warn(
          "the Raft server of {} did not finish closing within {} s (its RPC service still waits for a peer's call); going on",
          config.id(),
          RPC_CLOSE_WAIT.toSeconds());
    }
  }

  private static String rootCause(Throwable t) {
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
  }
}
