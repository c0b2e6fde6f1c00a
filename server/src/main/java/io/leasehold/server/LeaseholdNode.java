package io.leasehold.server;

import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.server.admin.LogFormatUpgrade;
import io.leasehold.server.api.AcquireWaits;
import io.leasehold.server.api.AdminService;
import io.leasehold.server.api.ClusterService;
import io.leasehold.server.api.LeasesService;
import io.leasehold.server.api.RequestLimits;
import io.leasehold.server.api.RoutingService;
import io.leasehold.server.api.ServiceWaits;
import io.leasehold.server.auth.NodeAuth;
import io.leasehold.server.expiry.ExpiryClock;
import io.leasehold.server.expiry.ExpiryTicker;
import io.leasehold.server.health.NodeHealth;
import io.leasehold.server.metrics.NodeMetrics;
import io.leasehold.server.raft.AppliedEntries;
import io.leasehold.server.raft.CommitClock;
import io.leasehold.server.raft.Consensus;
import io.leasehold.server.raft.DivisionClosure;
import io.leasehold.server.raft.FaultControl;
import io.leasehold.server.raft.PeerTraffic;
import io.leasehold.server.raft.RaftConsensus;
import io.leasehold.server.raft.ReplicationTrace;
import io.leasehold.server.raft.Replicator;
import io.leasehold.server.raft.WriteTrace;
import io.leasehold.server.rpc.GrpcErrors;
import io.leasehold.server.tls.NodeTls;
import io.leasehold.server.ui.Dashboard;
import io.leasehold.server.watch.GroupWatches;
import io.leasehold.server.watch.HistoryCompactor;
import io.leasehold.server.watch.WatchHub;
import io.leasehold.statemachine.core.Counters;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import io.leasehold.statemachine.store.RocksDbStore;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Leasehold node, wired from its parts: consensus on the peer port ({@link Consensus}, on
 * Ratis: {@link RaftConsensus}), the gRPC API, health and reflection on the client port ({@link
 * ApiServer}), what reacts to applied entries ({@link AppliedEntries}), metrics ({@link
 * NodeMetrics}) and lifecycle log lines ({@link LifecycleLog}).
 *
 * <p>Data layout: {@code <data-dir>/raft} holds Ratis's log and snapshots, {@code <data-dir>/state}
 * the live RocksDB.
 */
public final class LeaseholdNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseholdNode.class);

  /** The shortest a clean stop waits for its leaderships to be handed over. */
  private static final Duration MIN_HAND_OVER_WAIT = Duration.ofSeconds(3);

  private final NodeConfig config;
  private final NodeTls tls;
  private final LifecycleLog lifecycle;
  private final NodeDiagnostics diagnostics;
  private final WatchHub watchHub;

  /** Watch as the node serves it: the meta group's hub, and one per lease group it hosts. */
  private final GroupWatches groupWatches;

  private final NodeMetrics metrics;
  private final LeaseStateMachine stateMachine;

  /** RocksDB's memory budget, shared by the stores of every Raft group this node hosts. */
  private final RocksDbStore.Memory storeMemory = RocksDbStore.Memory.create();

  private final RaftConsensus consensus;
  private final AcquireWaits acquireWaits;
  private final ServiceWaits serviceWaits = new ServiceWaits();
  private final LogFormatUpgrade logFormatUpgrade;
  private final NodeAuth auth;
  private final NodeHealth health;
  private final HistoryCompactor compactor;
  private final RequestLimits requestLimits;
  private final DivisionClosure divisionClosure;
  private final ClusterService clusterService;
  private final ApiServer api;
  private volatile Dashboard dashboard;
  private volatile int metricsPort = -1;
  private volatile WriteTrace writeTrace;
  private volatile FaultControl faultControl;
  private volatile boolean closed;

  private LeaseholdNode(NodeConfig config, NodeTls tls, ExpiryClock clock) throws IOException {
    this.config = config;
    this.tls = tls;
    this.lifecycle = new LifecycleLog(config.id());
    this.diagnostics =
        new NodeDiagnostics(
            new CommitClock(),
            new ReplicationTrace(),
            new PeerTraffic(),
            new ExpiryTicker(config.tickInterval(), config.stallThreshold(), clock));
    // The hub reaches the core through the state machine, which exists only after this line.
    AtomicReference<LeaseStateMachine> sm = new AtomicReference<>();
    this.watchHub =
        new WatchHub(
            () -> sm.get().core(),
            config.watchQueueLimit(),
            config.watchProgressInterval(),
            config.watchMessageRate(),
            config.watchMaxDelay(),
            config.watchSenders());
    this.groupWatches =
        new GroupWatches(
            watchHub,
            this::leaseGroupCore,
            new GroupWatches.Placements() {
              @Override
              public boolean active() {
                return consensus.servesLeaseGroups();
              }

              @Override
              public CompletableFuture<Integer> groupToFollow(String namespace) {
                return consensus
                    .groupToFollow(namespace)
                    .exceptionallyCompose(
                        e ->
                            CompletableFuture.failedFuture(
                                GrpcErrors.toStatus(
                                    e instanceof java.util.concurrent.CompletionException
                                            && e.getCause() != null
                                        ? e.getCause()
                                        : e,
                                    Optional.empty())));
              }

              @Override
              public java.util.List<Integer> hostedGroups() {
                return java.util.List.copyOf(consensus.leaseGroupCores().keySet());
              }

              @Override
              public java.util.List<Integer> reachedGroups() {
                return consensus.reachedLeaseGroups();
              }

              @Override
              public java.util.Map<Integer, java.util.List<String>> memberAddresses() {
                java.util.Map<Integer, java.util.List<String>> out = new java.util.TreeMap<>();
                for (io.leasehold.server.raft.Consensus.GroupRoute r : consensus.reachedGroups()) {
                  out.put(
                      r.number(),
                      r.members().stream()
                          .map(consensus::clientAddressOf)
                          .flatMap(Optional::stream)
                          .toList());
                }
                return out;
              }
            });
    // Proposes through the consensus made a few lines below, once calls arrive.
    this.acquireWaits = new AcquireWaits(this::propose, name -> consensus().appliesEntriesOf(name));
    this.metrics =
        new NodeMetrics(
            new NodeMetricsSource(
                sm::get,
                watchHub,
                this::consensus,
                this::serving,
                config.dataDir(),
                this::divisionClosedNow,
                acquireWaits));
    AppliedEntries applied =
        new AppliedEntries(
            diagnostics.commitClock(),
            diagnostics.replicationTrace(),
            diagnostics.ticker(),
            watchHub,
            result -> {
              acquireWaits.onApplied(result);
              serviceWaits.onApplied(result);
            },
            metrics,
            lifecycle);
    this.stateMachine =
        new LeaseStateMachine(
            config.dataDir().resolve("state"),
            applied,
            LeaseholdNode::wallClockMicros,
            Optional.of(storeMemory));
    sm.set(stateMachine);
    this.consensus =
        new RaftConsensus(
            config,
            tls,
            stateMachine,
            diagnostics.replicationTrace(),
            diagnostics.peerTraffic(),
            lifecycle,
            LeaseholdNode::wallClockMicros,
            storeMemory,
            () -> new ExpiryTicker(config.tickInterval(), config.stallThreshold(), clock),
            (result, group) -> {
              acquireWaits.onApplied(result);
              serviceWaits.onApplied(result);
              groupWatches.onApplied(result, group);
            });
    consensus.onLeaseGroupLeft(groupWatches::left);
    consensus.timeWritesWith(metrics::written);
    consensus.listen(
        new Consensus.Listener() {
          @Override
          public void leaderChanged(String leaderId, long term) {
            metrics.leaderChanged();
          }
        });
    this.logFormatUpgrade =
        new LogFormatUpgrade(consensus.logFormatCluster(stateMachine, this::isLeader));
    this.auth =
        new NodeAuth(
            config,
            () -> stateMachine.core().access(),
            consensus::logFormat,
            this::isLeader,
            consensus::propose,
            consensus::proposeHere,
            consensus::caughtUp);
    this.health =
        new NodeHealth(consensus::liveness, config.electionTimeoutMax(), ApiServer.SERVICES);
    this.compactor =
        new HistoryCompactor(
            stateMachine::core,
            consensus::proposeHere,
            this::isLeader,
            LeaseholdNode::wallClockMicros,
            config.historyMaxEvents(),
            config.historyMaxAge(),
            Duration.ofSeconds(1));
    this.requestLimits = new RequestLimits(config.limits());
    this.divisionClosure = consensus.divisionClosure(health::recheck, () -> closed);
    applied.bind(consensus, logFormatUpgrade, divisionClosure);
    this.clusterService = new ClusterService(new LocalMemberView(config, consensus, auth));
    this.api =
        new ApiServer(
            config,
            tls,
            consensus,
            groupWatches,
            acquireWaits,
            serviceWaits,
            auth,
            requestLimits,
            health,
            clusterService,
            consensus::leaderClientAddress,
            LeaseholdNode::wallClockMicros);
  }

  private Optional<LeaseCore> leaseGroupCore(int number) {
    return consensus.leaseGroupCore(number);
  }

  private CompletableFuture<LogReply> propose(LogCommand command) {
    return consensus.propose(command);
  }

  /** Blocking Resolve calls this node holds, waiting for a service's version to rise. */
  public int waitingResolves() {
    return serviceWaits.waiting();
  }

  /** Acquire calls queued on this node, waiting for a held name (as the metric reports them). */
  public int waitingAcquires() {
    return acquireWaits.waiting();
  }

  /** The names of the gRPC services this node serves on its client port. */
  public List<String> servedServices() {
    return api.servedServices();
  }

  /** Starts a node and returns once both ports are open (it may not have a leader yet). */
  public static LeaseholdNode start(NodeConfig config) throws IOException {
    return start(config, node -> {});
  }

  /**
   * As {@link #start(NodeConfig)}, handing the node to {@code beforeStart} before any of its
   * servers starts: for tests (and the test kit) that must see or steer everything a node does from
   * its first message.
   */
  public static LeaseholdNode start(NodeConfig config, Consumer<LeaseholdNode> beforeStart)
      throws IOException {
    return start(config, new ExpiryClock(), beforeStart);
  }

  /**
   * As {@link #start(NodeConfig, Consumer)}, deciding expiry by {@code clock}: a test that moves it
   * forward ({@link ExpiryClock#advance}) sees TTLs run out without waiting. Give every node of a
   * cluster the same clock, so that whichever leads sees the move.
   */
  public static LeaseholdNode start(
      NodeConfig config, ExpiryClock clock, Consumer<LeaseholdNode> beforeStart)
      throws IOException {
    NodeTls tls = NodeTls.start(config, new LifecycleLog(config.id()));
    LeaseholdNode node;
    try {
      node = new LeaseholdNode(config, tls, clock);
    } catch (IOException | RuntimeException e) {
      tls.close();
      throw e;
    }
    try {
      beforeStart.accept(node);
      config
          .faultControl()
          .ifPresent(
              file -> node.faultControl = new FaultControl(file, node.diagnostics.peerTraffic()));
      node.consensus.start();
      node.diagnostics
          .ticker()
          .bind(
              node.stateMachine,
              node.consensus::proposeHere,
              node::isLeader,
              node.consensus::commitIndex);
      node.api.start();
      node.startWriteTrace();
      node.health.start();
      if (config.metricsPort().isPresent()) {
        node.metricsPort =
            node.metrics.serve(
                config.bindHost(),
                config.metricsPort().get(),
                node.health::serving,
                config.metricsPlaintext() ? Optional.empty() : tls.metricsPort());
        if (config.ui()) {
          node.startDashboard();
        }
      }
    } catch (IOException | RuntimeException e) {
      node.close();
      throw e;
    }
    node.auth.logStart(config.id(), tls.clientPortTls());
    LOG.info(
        "node {} started: client {}{} peer {}{} metrics {} data {}{}",
        config.id(),
        config.self().clientAddress(),
        tls.clientPortTls()
            ? (config.clientCertAuth() ? " (TLS, client certificates required)" : " (TLS)")
            : " (plaintext)",
        config.self().peerAddress(),
        tls.peerTls() ? " (mutual TLS)" : " (plaintext)",
        node.metricsPort < 0
            ? "off"
            : config.bindHost()
                + ":"
                + node.metricsPort
                + (node.metricsTls() ? " (TLS)" : " (plaintext)"),
        config.dataDir(),
        config.join() ? " (joining: waits to be added)" : "");
    return node;
  }

  /** The read-only dashboard on the metrics port, reading through the API's own handlers. */
  private void startDashboard() {
    Supplier<Optional<String>> leaderHint = consensus::leaderClientAddress;
    dashboard =
        new Dashboard(
            config.id(),
            consensus::liveness,
            config.electionTimeoutMax(),
            config.requestTimeout(),
            new LeasesService(consensus, groupWatches, leaderHint),
            new RoutingService(consensus, leaderHint),
            new AdminService(consensus, leaderHint, LeaseholdNode::wallClockMicros),
            clusterService,
            consensus.newPeerProbe(),
            auth.authorizer(),
            groupWatches::hubs,
            metrics.registry());
    metrics.addContext("/ui", dashboard::handle);
  }

  /** The dashboard, when the metrics port is on and {@code --ui} is not off. */
  public Optional<Dashboard> dashboard() {
    return Optional.ofNullable(dashboard);
  }

  /**
   * Completes, with a one-line reason, if Ratis closes this node's Raft division while the node is
   * running. The node then answers nothing useful until its process starts again: the {@code
   * server} command exits with code 75 so that a supervisor (systemd, Kubernetes, the fault tests'
   * harness) restarts it from its data dir. Never completes after {@link #close}.
   */
  public CompletableFuture<String> divisionClosed() {
    return divisionClosure.closed();
  }

  /**
   * With {@code --trace-writes}: every step of each entry through this node, to a file (a
   * diagnostic).
   */
  private void startWriteTrace() {
    config
        .traceWrites()
        .ifPresent(
            file -> {
              WriteTrace trace = WriteTrace.start(config.id(), file);
              writeTrace = trace;
              diagnostics.replicationTrace().listen(trace);
              diagnostics.commitClock().listen(trace, consensus.commitIndex());
              consensus.traceWith(trace);
            });
  }

  static long wallClockMicros() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  public NodeConfig config() {
    return config;
  }

  public String id() {
    return config.id();
  }

  /**
   * The door for proposals and reads as it is, its failures Ratis's own: for tests and benchmarks
   * that look inside.
   */
  public Replicator replicator() {
    return consensus.replicator();
  }

  /** Consensus: the log, role and term, members, leadership and snapshots. */
  public Consensus consensus() {
    return consensus;
  }

  public String clientAddress() {
    return config.self().clientAddress();
  }

  /**
   * What benchmarks, diagnostics and fault tests reach inside this node: commit clock, replication
   * trace, peer traffic, expiry ticker.
   */
  public NodeDiagnostics diagnostics() {
    return diagnostics;
  }

  /**
   * Consensus as Ratis runs it, with its division and replicator: for tests and benchmarks that
   * look inside.
   */
  public RaftConsensus ratis() {
    return consensus;
  }

  /** Authentication, authorization and the audit records of cluster actions. */
  public NodeAuth auth() {
    return auth;
  }

  /** The per-node limits against abuse the client port enforces. */
  public RequestLimits requestLimits() {
    return requestLimits;
  }

  /**
   * Whether Ratis closed this node's division while it runs (for the metrics; false before the node
   * is built).
   */
  private boolean divisionClosedNow() {
    DivisionClosure d = divisionClosure;
    return d != null && d.isClosed();
  }

  public NodeMetrics metrics() {
    return metrics;
  }

  /** Whether the gRPC health service reports SERVING. */
  public boolean serving() {
    return health.serving();
  }

  /**
   * Whether the client port speaks TLS (the metrics port too, unless {@link #metricsTls} says
   * otherwise).
   */
  public boolean clientTls() {
    return tls.clientPortTls();
  }

  /**
   * Whether the metrics port speaks TLS: with TLS on the client port, unless the metrics port is
   * told to speak plaintext.
   */
  public boolean metricsTls() {
    return tls.clientPortTls() && !config.metricsPlaintext();
  }

  /** The port the metrics endpoint listens on, if it is on. */
  public OptionalInt metricsPort() {
    return metricsPort < 0 ? OptionalInt.empty() : OptionalInt.of(metricsPort);
  }

  public boolean isLeader() {
    return !closed && consensus.isLeader();
  }

  public LeaseStateMachine stateMachine() {
    return stateMachine;
  }

  public WatchHub watchHub() {
    return watchHub;
  }

  /**
   * What this node's apply loop has counted since it started (leases by outcome, rejections by
   * reason, late heartbeats).
   */
  public Counters.Snapshot counters() {
    return stateMachine.core().counters().snapshot();
  }

  /**
   * A clean stop, as on SIGTERM: every group this node leads is first handed to a caught-up
   * follower, so its clients wait for one vote rather than an election timeout and an election (a
   * rolling restart then costs each group one short pause); then {@link #close}. The hand-over
   * waits at most twice the longest election timeout, and no less than three seconds.
   */
  public void stop() {
    if (!closed) {
      Duration bound = config.electionTimeoutMax().multipliedBy(2);
      try {
        consensus.handOverLeadership(
            bound.compareTo(MIN_HAND_OVER_WAIT) < 0 ? MIN_HAND_OVER_WAIT : bound);
      } catch (RuntimeException e) {
        LOG.warn("leadership not handed over before stopping: {}", e.toString());
      }
    }
    close();
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
    if (dashboard != null) {
      dashboard.close();
    }
    consensus.closeAdmin();
    compactor.close();
    logFormatUpgrade.close();
    watchHub.close();
    acquireWaits.close();
    serviceWaits.close();
    api.shutdownNow();
    diagnostics.ticker().close();
    consensus.closeClient();
    if (faultControl != null) {
      faultControl.close();
    }
    consensus.closeServer();
    if (writeTrace != null) {
      writeTrace.close();
    }
    tls.close();
    api.awaitTermination();
    storeMemory.release(); // a store still closing holds a reference of its own
    LOG.info("node {} stopped", config.id());
  }
}
