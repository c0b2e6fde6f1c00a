package io.leasehold.server;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.leasehold.server.admin.ClusterAdmin;
import io.leasehold.server.admin.LogFormatUpgrade;
import io.leasehold.server.api.AdminService;
import io.leasehold.server.api.ClusterService;
import io.leasehold.server.api.LeasesService;
import io.leasehold.server.api.RegistryService;
import io.leasehold.server.api.RoutingService;
import io.leasehold.server.api.StrictProtobuf;
import io.leasehold.server.expiry.ExpiryTicker;
import io.leasehold.server.health.NodeHealth;
import io.leasehold.server.metrics.NodeMetrics;
import io.leasehold.server.tls.NodeTls;
import io.leasehold.server.watch.HistoryCompactor;
import io.leasehold.server.watch.WatchHub;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.Counters;
import io.leasehold.statemachine.core.LeaseEvent;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import io.leasehold.server.raft.CommitClock;
import io.leasehold.server.raft.LeadershipCheck;
import io.leasehold.server.raft.LeaseholdRpcType;
import io.leasehold.server.raft.ReplicationTrace;
import io.leasehold.server.raft.WriteTrace;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Leasehold node: a Ratis server on the peer port, the gRPC API on the client port, and the
 * expiry ticker that runs while this node leads.
 *
 * <p>Data layout: {@code <data-dir>/raft} holds Ratis's log and snapshots,
 * {@code <data-dir>/state} the live RocksDB.
 *
 * <p>Operations: the gRPC health service ({@link NodeHealth}) and server reflection on the client
 * port, Prometheus metrics on the metrics port when one is set ({@link NodeMetrics}), one
 * structured log line per lifecycle event ({@link LifecycleLog}), and membership and snapshots
 * through {@link ClusterAdmin}.
 */
public final class LeaseholdNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseholdNode.class);
  /** Ratis's client request pool: one thread per core, and at least two. */
  static final int RATIS_CLIENT_THREADS = Math.max(2, Runtime.getRuntime().availableProcessors());
  /**
   * The shortest interval at which a client may send keepalive PINGs on the client port (as
   * etcd's {@code --grpc-keepalive-min-time}), with or without calls open. grpc-java's server
   * default is 5 minutes: an SDK user whose channel keepalive is shorter (the client builder's
   * channel customizer allows it) would get GOAWAY {@code too_many_pings} and lose the connection.
   */
  static final Duration MIN_CLIENT_KEEPALIVE = Duration.ofSeconds(5);

  private final NodeConfig config;
  private final RaftGroupId groupId;
  private final LeaseStateMachine stateMachine;
  private final RaftServer raftServer;
  private final Replicator replicator;
  private final LeadershipCheck leadershipCheck;
  private final CommitClock commitClock = new CommitClock();
  private final ReplicationTrace replicationTrace = new ReplicationTrace();
  private final ExpiryTicker ticker;
  private final WatchHub watchHub;
  private final HistoryCompactor compactor;
  private final Server grpcServer;
  private final LifecycleLog lifecycle;
  private final NodeMetrics metrics;
  private final NodeHealth health;
  private final ClusterAdmin admin;
  private final LogFormatUpgrade logFormatUpgrade;
  private final NodeTls tls;
  private final io.leasehold.server.auth.NodeAuth auth;
  private final io.leasehold.server.api.RequestLimits requestLimits;
  /** The Replicator's Raft client: it must know every member to forward writes to the leader. */
  private final RaftClient raftClient;
  private volatile int metricsPort = -1;
  private volatile WriteTrace writeTrace;
  private volatile boolean closed;
  /** Set once the Ratis server has started; read by the apply thread and when Ratis closes the division. */
  private volatile RaftServer.Division startedDivision;
  /** Completed, with the reason, when Ratis closes this node's division while the node runs. */
  private final java.util.concurrent.CompletableFuture<String> divisionClosed = new java.util.concurrent.CompletableFuture<>();

  private LeaseholdNode(NodeConfig config, NodeTls tls) throws IOException {
    this.config = config;
    this.tls = tls;
    this.groupId = groupId(config.clusterName());
    RaftPeerId selfId = RaftPeerId.valueOf(config.id());
    List<RaftPeer> peers = config.peers().stream().map(Members::raftPeer).toList();
    RaftGroup group = RaftGroup.valueOf(groupId, peers);
    // A joining node has no group of its own: it never stands for election, and learns the
    // configuration from the leader once a member adds it. A restart recovers it from disk.
    RaftGroup initialGroup = config.join() ? RaftGroup.valueOf(groupId) : group;
    LifecycleLog events = new LifecycleLog(config.id());
    this.lifecycle = events;

    ExpiryTicker expiry = new ExpiryTicker(config.tickInterval(), config.stallThreshold(), System::nanoTime);
    this.ticker = expiry;
    // The hub reaches the core through the state machine, which exists only after this line.
    java.util.concurrent.atomic.AtomicReference<LeaseStateMachine> sm = new java.util.concurrent.atomic.AtomicReference<>();
    WatchHub hub = new WatchHub(() -> sm.get().core(), config.watchQueueLimit(), config.watchProgressInterval(),
        config.watchMessageRate(), config.watchMaxDelay(), config.watchSenders());
    this.watchHub = hub;
    NodeMetrics nodeMetrics = new NodeMetrics(metricsSource());
    this.metrics = nodeMetrics;
    this.stateMachine = new LeaseStateMachine(config.dataDir().resolve("state"), new LeaseStateMachine.Listener() {
      @Override
      public void onApplied(ApplyResult result) {
        RaftServer.Division d = startedDivision;
        if (d != null) {
          commitClock.applied(d); // first: before the watch hub can hand the events on
        }
        expiry.onApplied(result);
        hub.onApplied(result);
        replicationTrace.applied(result.revision());
        logExpiries(result);
      }

      @Override
      public void onApplyTime(long nanos) {
        nodeMetrics.applied(nanos);
      }

      @Override
      public void onLeaderChanged(String leaderId, long term) {
        nodeMetrics.leaderChanged();
        events.event("leader_changed", "leader", leaderId, "term", term);
        wakeHeldWrites();
      }

      @Override
      public void onConfigurationChanged(List<RaftPeer> members) {
        knowMembers(members);
      }

      @Override
      public void onDivisionClosed(org.apache.ratis.proto.RaftProtos.RoleInfoProto roleInfo) {
        divisionClosedByRatis(roleInfo);
      }

      @Override
      public void onSnapshotTaken(long term, long index, long bytes) {
        nodeMetrics.snapshotTaken();
        events.event("snapshot_taken", "term", term, "index", index, "bytes", bytes);
      }

      @Override
      public void onLeaderReady() {
        expiry.promote();
        logFormatUpgrade.promote();
        events.event("leader_ready", "term", division().getInfo().getCurrentTerm());
        wakeHeldWrites();
      }

      @Override
      public void onNotLeader() {
        expiry.demote();
        logFormatUpgrade.demote();
      }

      @Override
      public java.util.concurrent.CompletableFuture<Void> confirmLeadership(long term) {
        return leadershipCheck.confirm(division(), term, config.requestTimeout());
      }
    }, LeaseholdNode::wallClockMicros);
    sm.set(stateMachine);

    // Ratis's gRPC with Leasehold's log appender: a quick fork search for a rejoining node, and
    // answers reported to the leadership check that linearizable reads on the leader wait for.
    RaftProperties raftProperties = serverProperties(config);
    org.apache.ratis.conf.Parameters raftParameters = new org.apache.ratis.conf.Parameters();
    this.leadershipCheck = new LeadershipCheck();
    LeaseholdRpcType.configure(raftProperties, raftParameters, leadershipCheck, commitClock, replicationTrace, config.commitPushDelay());
    tls.peerPort().ifPresent(conf -> GrpcConfigKeys.TLS.setConf(raftParameters, conf));
    this.raftServer = RaftServer.newBuilder()
        .setServerId(selfId)
        .setGroup(initialGroup)
        .setProperties(raftProperties)
        .setParameters(raftParameters)
        .setStateMachine(stateMachine)
        .setOption(RaftStorage.StartupOption.RECOVER)
        .build();
    RaftClient client = RaftClient.newBuilder()
        .setProperties(clientProperties(config))
        .setParameters(raftClientParameters(tls))
        .setRaftGroup(group)
        .setClientId(ClientId.randomId())
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(
            (int) Math.max(1, config.requestTimeout().toMillis() / 200), TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)))
        .build();
    this.raftClient = client;
    this.replicator = new Replicator(client, raftServer, groupId, selfId, stateMachine, LeaseholdNode::wallClockMicros,
        config.maxPendingWrites(), config.requestTimeout(), leadershipCheck);
    ClusterAdmin.Retries adminRetries = new ClusterAdmin.Retries(
        RetryPolicies.retryUpToMaximumCountWithFixedSleep(10, TimeDuration.valueOf(500, TimeUnit.MILLISECONDS)));
    this.admin = new ClusterAdmin(RaftClient.newBuilder()
        .setProperties(adminClientProperties(config))
        .setParameters(raftClientParameters(tls))
        .setRaftGroup(group)
        .setClientId(ClientId.randomId())
        .setRetryPolicy(adminRetries)
        .build(), adminRetries, raftServer, groupId, selfId, stateMachine, this::division, events,
        // A linearizable read of any name: once answered, this node has applied all that was committed.
        () -> replicator.read(io.leasehold.proto.v1.ReadQuery.newBuilder()
            .setGet(io.leasehold.proto.v1.GetRequest.newBuilder().setName("leasehold/read-barrier")).build(), false));
    this.logFormatUpgrade = new LogFormatUpgrade(new LogFormatUpgrade.Cluster() {
      @Override
      public int currentFormat() {
        return stateMachine.core().logFormat();
      }

      @Override
      public boolean isLeader() {
        return LeaseholdNode.this.isLeader();
      }

      @Override
      public List<String> otherMembers() {
        return division().getRaftConf().getCurrentPeers().stream().map(p -> p.getId().toString())
            .filter(id -> !id.equals(config.id())).toList();
      }

      @Override
      public java.util.concurrent.CompletableFuture<Integer> newestFormatOf(String member) {
        return replicator.newestLogFormatOf(RaftPeerId.valueOf(member));
      }

      @Override
      public java.util.concurrent.CompletableFuture<?> propose(int format) {
        return replicator.proposeHere(io.leasehold.proto.v1.LogCommand.newBuilder()
            .setSetLogFormat(io.leasehold.proto.v1.SetLogFormat.newBuilder().setFormat(format)).build());
      }
    });
    this.auth = new io.leasehold.server.auth.NodeAuth(config, () -> stateMachine.core().access(), replicator::logFormat,
        this::isLeader, replicator::propose, replicator::proposeHere);
    this.health = new NodeHealth(this::division, config.electionTimeoutMax(),
        List.of("leasehold.v1.Leases", "leasehold.v1.Routing", "leasehold.v1.Registry", "leasehold.v1.Cluster", "leasehold.v1.Admin",
            "leasehold.v1.Auth"));
    this.compactor = new HistoryCompactor(stateMachine::core, replicator::proposeHere, this::isLeader,
        LeaseholdNode::wallClockMicros, config.historyMaxEvents(), config.historyMaxAge(), Duration.ofSeconds(1));
    this.requestLimits = new io.leasehold.server.api.RequestLimits(config.limits());
    this.grpcServer = NettyServerBuilder
        .forAddress(new InetSocketAddress(config.bindHost(), config.self().clientPort()),
            tls.clientPort().orElseGet(io.grpc.InsecureServerCredentials::create))
        // Without PINGs a connection whose client machine died, or whose client stopped reading,
        // lives until TCP gives up (hours), and its Watch streams stay registered in the hub as
        // long as no events push them over the lag limit. An unanswered PING closes it and
        // cancels its calls. And clients may ping as often as MIN_CLIENT_KEEPALIVE.
        .keepAliveTime(nanos(config.grpcKeepaliveInterval()), TimeUnit.NANOSECONDS)
        .keepAliveTimeout(nanos(config.grpcKeepaliveTimeout()), TimeUnit.NANOSECONDS)
        .permitKeepAliveTime(nanos(MIN_CLIENT_KEEPALIVE), TimeUnit.NANOSECONDS)
        .permitKeepAliveWithoutCalls(true)
        .callExecutor(LeaseholdNode::callExecutor)
        // Limits against abuse (docs/operations.md, "Limits"): gRPC refuses larger requests and
        // headers with RESOURCE_EXHAUSTED before anything reads them.
        .maxInboundMessageSize(config.limits().requestBytes())
        .maxInboundMetadataSize(config.limits().metadataBytes())
        .addTransportFilter(requestLimits.connectionIds())
        // Watch streams are compressed with lz4-block for clients that accept it (LeasesService).
        .compressorRegistry(io.leasehold.proto.Lz4BlockCodec.compressors())
        .addService(guarded(new LeasesService(replicator, hub, this::leaderClientAddress).serviceDefinition()))
        .addService(guarded(new RoutingService(replicator, this::leaderClientAddress).bindService()))
        .addService(guarded(new RegistryService(replicator, this::leaderClientAddress).bindService()))
        .addService(guarded(new ClusterService(this).bindService()))
        .addService(guarded(new AdminService(replicator, this::leaderClientAddress, LeaseholdNode::wallClockMicros).bindService()))
        .addService(guarded(new io.leasehold.server.api.AuthService(replicator, this::leaderClientAddress, auth).bindService()))
        .addService(health.service())
        .addService(ProtoReflectionServiceV1.newInstance())
        .addService(reflectionV1Alpha())
        .build();
  }

  /**
   * A Leasehold service as served: every call passes the authorization point, which sees the
   * request parsed (and strictly: a malformed body is INVALID_ARGUMENT, {@link StrictProtobuf}),
   * then the limits against abuse, which see only authorized calls and their caller.
   */
  private ServerServiceDefinition guarded(ServerServiceDefinition service) {
    // The last interceptor listed runs first.
    return StrictProtobuf.wrap(io.grpc.ServerInterceptors.intercept(service, requestLimits, auth.authorizer()));
  }

  /** The names of the gRPC services this node serves on its client port. */
  public List<String> servedServices() {
    return grpcServer.getServices().stream().map(d -> d.getServiceDescriptor().getName()).toList();
  }

  /** Starts a node and returns once both ports are open (it may not have a leader yet). */
  public static LeaseholdNode start(NodeConfig config) throws IOException {
    return start(config, node -> { });
  }

  /**
   * As {@link #start(NodeConfig)}, handing the node to {@code beforeStart} before any of its
   * servers starts: for tests that must see everything a node does from its first message.
   */
  static LeaseholdNode start(NodeConfig config, Consumer<LeaseholdNode> beforeStart) throws IOException {
    NodeTls tls = NodeTls.start(config, new LifecycleLog(config.id()));
    LeaseholdNode node;
    try {
      node = new LeaseholdNode(config, tls);
    } catch (IOException | RuntimeException e) {
      tls.close();
      throw e;
    }
    try {
      beforeStart.accept(node);
      node.raftServer.start();
      node.startedDivision = node.division();
      node.knowMembers(node.division().getRaftConf().getCurrentPeers());
      node.ticker.bind(node.stateMachine, node.replicator::proposeHere, node::isLeader,
          () -> node.division().getRaftLog().getLastCommittedIndex());
      node.grpcServer.start();
      node.startWriteTrace();
      node.health.start();
      if (config.metricsPort().isPresent()) {
        node.metricsPort = node.metrics.serve(config.bindHost(), config.metricsPort().get(), node.health::serving,
            config.metricsPlaintext() ? java.util.Optional.empty() : tls.metricsPort());
      }
    } catch (IOException | RuntimeException e) {
      node.close();
      throw e;
    }
    node.auth.logStart(config.id(), tls.clientPortTls());
    LOG.info("node {} started: client {}{} peer {}{} metrics {} data {}{}", config.id(), config.self().clientAddress(),
        tls.clientPortTls() ? (config.clientCertAuth() ? " (TLS, client certificates required)" : " (TLS)") : " (plaintext)",
        config.self().peerAddress(), tls.peerTls() ? " (mutual TLS)" : " (plaintext)",
        node.metricsPort < 0 ? "off" : config.bindHost() + ":" + node.metricsPort + (node.metricsTls() ? " (TLS)" : " (plaintext)"),
        config.dataDir(),
        config.join() ? " (joining: waits to be added)" : "");
    return node;
  }

  /**
   * Completes, with a one-line reason, if Ratis closes this node's Raft division while the node
   * is running. The node then answers nothing useful until its process starts again: the
   * {@code server} command exits with code 75 so that a supervisor (systemd, Kubernetes, the
   * fault tests' harness) restarts it from its data dir. Never completes after {@link #close}.
   */
  public java.util.concurrent.CompletableFuture<String> divisionClosed() {
    return divisionClosed.copy();
  }

  /**
   * A candidate whose configuration leaves it out is shut down by Ratis (NOT_IN_CONF, or the
   * leader's shouldShutdown answer). That happens to a removed member that is still running, and
   * also to a member being added back: while it catches up it replays the entry that removed it,
   * and if the leader falls silent for an election timeout just then, it stands for election and
   * is closed. A restart recovers it: a node whose configuration on disk leaves it out starts
   * without an election timer and waits for the leader.
   */
  private void divisionClosedByRatis(org.apache.ratis.proto.RaftProtos.RoleInfoProto roleInfo) {
    if (closed) {
      return;
    }
    RaftServer.Division d = startedDivision;
    List<String> members = d == null ? List.of() : d.getRaftConf().getCurrentPeers().stream().map(p -> p.getId().toString()).sorted().toList();
    String reason = String.format("Ratis closed the Raft division of node %s (role %s, term %d); the configuration it has, %s, %s",
        config.id(), roleInfo.getRole(), d == null ? -1 : d.getInfo().getCurrentTerm(), members,
        members.contains(config.id()) ? "lists it (a leader answered that it is not a member)"
            : "leaves it out (removed, or added back and still catching up)");
    lifecycle.event("division_closed", "role", roleInfo.getRole(), "members", String.join(",", members));
    LOG.error(reason);
    // NOT_SERVING at once, for load balancers and for whoever acts on the completion.
    health.recheck().whenComplete((v, e) -> divisionClosed.complete(reason));
  }

  /** With {@code --trace-writes}: every step of each entry through this node, to a file (a diagnostic). */
  private void startWriteTrace() {
    config.traceWrites().ifPresent(file -> {
      WriteTrace trace = WriteTrace.start(config.id(), file);
      writeTrace = trace;
      replicationTrace.listen(trace);
      commitClock.listen(trace, division().getRaftLog().getLastCommittedIndex());
      replicator.traceWith(trace);
    });
  }

  /** The calls that run on the Netty event loop that read them ({@link #callExecutor}). */
  private static final java.util.Set<String> ON_EVENT_LOOP = java.util.Set.of(
      "leasehold.v1.Leases/Acquire", "leasehold.v1.Leases/Renew", "leasehold.v1.Leases/Release", "leasehold.v1.Leases/Update",
      "leasehold.v1.Leases/Get", "leasehold.v1.Registry/Register", "leasehold.v1.Registry/Deregister", "leasehold.v1.Registry/SetStatus");

  /**
   * Writes (and single-name reads) only check their request and hand it on without blocking, so
   * they run where gRPC read them: the hop to gRPC's executor was one more thread hand-off per
   * call, which on a small machine cost more than the handler. Streams, listings, admin and
   * cluster calls, which may read much or wait, keep the executor.
   */
  private static java.util.concurrent.Executor callExecutor(io.grpc.ServerCall<?, ?> call, io.grpc.Metadata headers) {
    return ON_EVENT_LOOP.contains(call.getMethodDescriptor().getFullMethodName())
        ? com.google.common.util.concurrent.MoreExecutors.directExecutor()
        : null;
  }

  /** grpcurl and older tools still ask for the v1alpha reflection service. */
  @SuppressWarnings("deprecation")
  private static io.grpc.BindableService reflectionV1Alpha() {
    return ProtoReflectionService.newInstance();
  }

  /** Members added since the group formed are reachable for forwarded writes; this runs before any write reaches them. */
  private void knowMembers(java.util.Collection<RaftPeer> members) {
    RaftClient c = raftClient;
    if (c != null) {
      c.getClientRpc().addRaftPeers(members);
    }
  }

  private void logExpiries(ApplyResult result) {
    for (LeaseEvent e : result.events()) {
      if (e.type() == LeaseEvent.Type.EXPIRED) {
        lifecycle.event("lease_expired", "name", e.name(), "holder", e.lease().getHolder(), "token", e.lease().getToken(),
            "revision", e.revision());
      }
    }
  }

  private NodeMetrics.Source metricsSource() {
    return new NodeMetrics.Source() {
      @Override
      public Counters.Snapshot counters() {
        return LeaseholdNode.this.counters();
      }

      @Override
      public long liveLeases() {
        return NodeMetrics.orElse(() -> (long) stateMachine.core().liveLeases(), 0L);
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
          RaftServer.Division d = division();
          org.apache.ratis.server.DivisionInfo info = d.getInfo();
          return new NodeMetrics.RaftView(info.getCurrentRole().name().toLowerCase(java.util.Locale.ROOT), info.getCurrentTerm(),
              d.getRaftLog().getLastCommittedIndex(), info.getLastAppliedIndex(),
              stateMachine.latestSnapshotFile().map(s -> s.getIndex()).orElse(0L),
              d.getRaftConf().getCurrentPeers().size(), info.getLeaderId() != null);
        }, new NodeMetrics.RaftView("unknown", 0, 0, 0, 0, 0, false));
      }

      @Override
      public boolean serving() {
        return health.serving();
      }
    };
  }

  /** The Raft group of a cluster name: every member derives the same one. */
  public static RaftGroupId groupId(String clusterName) {
    return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(("leasehold:" + clusterName).getBytes(StandardCharsets.UTF_8)));
  }

  private static RaftProperties serverProperties(NodeConfig c) {
    RaftProperties p = new RaftProperties();
    RaftServerConfigKeys.setStorageDir(p, List.of(c.dataDir().resolve("raft").toFile()));
    GrpcConfigKeys.Server.setHost(p, c.bindHost());
    GrpcConfigKeys.Server.setPort(p, c.self().peerPort());
    // Heartbeats on the appends' own stream, so that the appender may push each new commit index
    // in an append without entries that names the last entry sent (ForkSearchingLogAppender).
    GrpcConfigKeys.Server.setHeartbeatChannel(p, false);
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, millis(c.electionTimeoutMin()));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, millis(c.electionTimeoutMax()));
    RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, c.snapshotThreshold());
    RaftServerConfigKeys.Snapshot.setCreationGap(p, Math.min(1024, c.snapshotThreshold()));
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.min(Integer.MAX_VALUE, c.logPurgeGap()));
    RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(c.logSegmentSizeBytes()));
    // Ratis keeps up to six closed segments (200 MB) of entries on the heap for appenders that
    // fall behind: under steady writes, heap the leases need. A follower further behind than one
    // closed segment is served from disk instead.
    RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, 1);
    RaftServerConfigKeys.Log.setSegmentCacheSizeMax(p, SizeInBytes.valueOf(Math.max(c.logSegmentSizeBytes(), 16L << 20)));
    // Ratis otherwise appends a metadata entry (the new commit index) to the log at every commit
    // advance: under load, nearly one more replicated, fsynced entry per write. A restarted node
    // needs no such record: the store keeps its own applied index, and the leader tells it the
    // commit index.
    RaftServerConfigKeys.Log.setLogMetadataEnabled(p, false);
    // The retry cache keeps every write's reply so a resend is answered, not applied again. Ours
    // are resent for at most the request timeout (Replicator), so twice that is enough; Ratis's
    // default of 60 s held some 200,000 replies per node at 3,000 writes/s, and the young
    // collections that copied them paused every node for 100-170 ms.
    RaftServerConfigKeys.RetryCache.setExpiryTime(p, millis(c.requestTimeout().multipliedBy(2)));
    // Ratis hands each client request to its client pool and the caller waits for it there; the
    // pool's work ends in one synchronized append, so more threads than cores add only
    // contention. Its default is unbounded: when a snapshot slowed the leader for a moment, the
    // pool grew to some 340 threads queued on that lock, and writes and watches stalled for up to
    // a second behind the convoy. A fixed pool queues the requests instead.
    RaftServerConfigKeys.ThreadPool.setClientCached(p, false);
    RaftServerConfigKeys.ThreadPool.setClientSize(p, RATIS_CLIENT_THREADS);
    return p;
  }

  /** The node's Raft clients dial the members' Raft ports, so they speak the peers' TLS. */
  private static org.apache.ratis.conf.Parameters raftClientParameters(NodeTls tls) {
    org.apache.ratis.conf.Parameters p = new org.apache.ratis.conf.Parameters();
    tls.peerPort().ifPresent(conf -> GrpcConfigKeys.TLS.setConf(p, conf));
    return p;
  }

  private static RaftProperties clientProperties(NodeConfig c) {
    RaftProperties p = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, millis(c.electionTimeoutMax().multipliedBy(2)));
    // Above our own admission bound, so Ratis never blocks a gRPC thread waiting for a slot.
    RaftClientConfigKeys.Async.setOutstandingRequestsMax(p, c.maxPendingWrites() + 16);
    return p;
  }

  /** Membership changes wait for a new member to catch up; snapshots and transfers for the leader. */
  private static RaftProperties adminClientProperties(NodeConfig c) {
    RaftProperties p = new RaftProperties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(60, TimeUnit.SECONDS));
    return p;
  }

  private static TimeDuration millis(Duration d) {
    return TimeDuration.valueOf(d.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** For gRPC's builder, which takes anything longer than about 1,000 days as "never". */
  private static long nanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException beyond292Years) {
      return Long.MAX_VALUE;
    }
  }

  static long wallClockMicros() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  public NodeConfig config() {
    return config;
  }

  public String id() {
    return config.id();
  }

  public Replicator replicator() {
    return replicator;
  }

  public String clientAddress() {
    return config.self().clientAddress();
  }

  /** When this node, as leader, found its commit index moved: for benchmarks and diagnostics ({@link CommitClock}). */
  public CommitClock commitClock() {
    return commitClock;
  }

  /** Where log entries' time goes between leader and followers: for benchmarks and diagnostics ({@link ReplicationTrace}). */
  public ReplicationTrace replicationTrace() {
    return replicationTrace;
  }

  /** Writes this node holds through an election go to the new leader at once, not after their pause. */
  private void wakeHeldWrites() {
    Replicator r = replicator;
    if (r != null) {
      r.leaderChanged();
    }
  }

  public RaftServer.Division division() {
    try {
      return raftServer.getDivision(groupId);
    } catch (IOException e) {
      throw new IllegalStateException("Raft group " + groupId + " is not on this server", e);
    }
  }

  /** The client address of the leader this node knows of, for redirect hints. */
  public java.util.Optional<String> leaderClientAddress() {
    RaftPeerId leader = division().getInfo().getLeaderId();
    return leader == null ? java.util.Optional.empty() : clientAddressOf(leader.toString());
  }

  /** The gRPC API address of a member, from the Raft configuration (members added later) or {@code --peers}. */
  public java.util.Optional<String> clientAddressOf(String memberId) {
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

  /** Membership and snapshots. */
  /** Authentication, authorization and the audit records of cluster actions. */
  public io.leasehold.server.auth.NodeAuth auth() {
    return auth;
  }

  /** The per-node limits against abuse the client port enforces. */
  public io.leasehold.server.api.RequestLimits requestLimits() {
    return requestLimits;
  }

  public ClusterAdmin admin() {
    return admin;
  }

  public NodeMetrics metrics() {
    return metrics;
  }

  /** Whether the gRPC health service reports SERVING. */
  public boolean serving() {
    return health.serving();
  }

  /** Whether the client port speaks TLS (the metrics port too, unless {@link #metricsTls} says otherwise). */
  public boolean clientTls() {
    return tls.clientPortTls();
  }

  /** Whether the metrics port speaks TLS: with TLS on the client port, unless the metrics port is told to speak plaintext. */
  public boolean metricsTls() {
    return tls.clientPortTls() && !config.metricsPlaintext();
  }

  /** The port the metrics endpoint listens on, if it is on. */
  public java.util.OptionalInt metricsPort() {
    return metricsPort < 0 ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(metricsPort);
  }

  public boolean isLeader() {
    return !closed && division().getInfo().isLeader();
  }

  public LeaseStateMachine stateMachine() {
    return stateMachine;
  }

  public ExpiryTicker ticker() {
    return ticker;
  }

  public WatchHub watchHub() {
    return watchHub;
  }

  /** What this node's apply loop has counted since it started (leases by outcome, rejections by reason, late heartbeats). */
  public Counters.Snapshot counters() {
    return stateMachine.core().counters().snapshot();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    health.close();
    auth.close();
    metrics.close();
    admin.close();
    compactor.close();
    logFormatUpgrade.close();
    watchHub.close();
    grpcServer.shutdownNow();
    ticker.close();
    try {
      replicator.close();
    } catch (IOException e) {
      LOG.warn("closing Raft client: {}", e.toString());
    }
    try {
      raftServer.close();
    } catch (IOException e) {
      LOG.warn("closing Raft server: {}", e.toString());
    }
    leadershipCheck.close();
    if (writeTrace != null) {
      writeTrace.close();
    }
    tls.close();
    try {
      grpcServer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    LOG.info("node {} stopped", config.id());
  }
}
