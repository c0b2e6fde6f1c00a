package io.leasehold.server;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.statemachine.core.LogFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * N real Leasehold nodes (Ratis + gRPC on loopback ports picked free) inside one JVM, each with its
 * own data directory under a test's temp dir. Nodes can be stopped and restarted from disk.
 */
public final class TestCluster implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private final Path baseDir;
  private final List<Peer> peers;
  private final java.util.function.BiFunction<String, NodeConfig.Builder, NodeConfig.Builder> tweak;
  private io.grpc.ChannelCredentials credentials = io.grpc.InsecureChannelCredentials.create();
  private final Map<String, LeaseholdNode> nodes = new LinkedHashMap<>();
  private final Map<String, ManagedChannel> channels = new LinkedHashMap<>();

  /** Nodes started in join mode (not members until added). */
  private final java.util.Set<String> joining = new java.util.HashSet<>();

  private TestCluster(
      Path baseDir,
      List<Peer> peers,
      java.util.function.BiFunction<String, NodeConfig.Builder, NodeConfig.Builder> tweak) {
    this.baseDir = baseDir;
    this.peers = new ArrayList<>(peers);
    this.tweak = tweak;
  }

  public static TestCluster start(int size, Path baseDir) throws IOException {
    return start(size, baseDir, UnaryOperator.identity());
  }

  /** Starts {@code size} nodes and waits until one of them leads and is ready. */
  public static TestCluster start(int size, Path baseDir, UnaryOperator<NodeConfig.Builder> tweak)
      throws IOException {
    return start(size, baseDir, (id, b) -> tweak.apply(b));
  }

  /**
   * As {@link #start(int, Path, UnaryOperator)}, with settings per node id (asked again at every
   * start of a node).
   */
  public static TestCluster start(
      int size,
      Path baseDir,
      java.util.function.BiFunction<String, NodeConfig.Builder, NodeConfig.Builder> tweak)
      throws IOException {
    int[] ports = freePorts(size * 2);
    List<Peer> peers = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      peers.add(new Peer("n" + (i + 1), "127.0.0.1", ports[2 * i], ports[2 * i + 1]));
    }
    TestCluster cluster = new TestCluster(baseDir, peers, tweak);
    try {
      for (Peer p : peers) {
        cluster.startNode(p.id());
      }
      cluster.awaitLeader();
      // Every member runs this code, so the first leader raises the log format: tests see the
      // format a deployed cluster runs in (tokens index * 4096 + position, batched writes).
      // Every node, not only the leader: a node refuses authenticated writes until it applied it.
      // The leader asks every member first: on a busy machine that took more than 30 s.
      await(
          "every node applied the log format " + LogFormat.NEWEST,
          Duration.ofSeconds(90),
          () ->
              cluster.running().stream()
                  .allMatch(n -> n.stateMachine().core().logFormat() == LogFormat.NEWEST));
    } catch (IOException | RuntimeException e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  public NodeConfig configFor(String id) {
    NodeConfig.Builder b =
        NodeConfig.builder()
            .id(id)
            .peers(peers)
            .dataDir(baseDir.resolve(id))
            .electionTimeout(Duration.ofMillis(600), Duration.ofMillis(1200))
            .requestTimeout(Duration.ofSeconds(10))
            .join(joining.contains(id));
    return tweak.apply(id, b).build();
  }

  public LeaseholdNode startNode(String id) throws IOException {
    return startNode(id, node -> {});
  }

  /**
   * As {@link #startNode(String)}, handing the node to {@code beforeStart} before it can send or
   * receive anything.
   */
  public LeaseholdNode startNode(String id, Consumer<LeaseholdNode> beforeStart)
      throws IOException {
    if (nodes.get(id) != null) {
      throw new IllegalStateException(id + " is running");
    }
    LeaseholdNode node = LeaseholdNode.start(configFor(id), beforeStart);
    nodes.put(id, node);
    return node;
  }

  /**
   * Starts a new node in join mode on free ports: it has no group of its own until a member adds it
   * ({@code Cluster/AddMember}). {@link #ids} includes it from now on.
   */
  public LeaseholdNode startJoiningNode(String id) throws IOException {
    int[] ports = freePorts(2);
    peers.add(new Peer(id, "127.0.0.1", ports[0], ports[1]));
    joining.add(id);
    return startNode(id);
  }

  /**
   * What an operator does with a removed member before adding it back: stops it, deletes its data
   * and starts it in join mode, empty, on its old addresses.
   */
  public LeaseholdNode wipeAndStartJoining(String id) throws IOException {
    stopNode(id);
    Path data = configFor(id).dataDir();
    if (java.nio.file.Files.exists(data)) {
      try (var paths = java.nio.file.Files.walk(data)) {
        for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
          java.nio.file.Files.delete(p);
        }
      }
    }
    joining.add(id);
    return startNode(id);
  }

  /** {@code id}'s Member message, for Cluster/AddMember. */
  public io.leasehold.proto.v1.Member member(String id) {
    Peer p = peer(id);
    return io.leasehold.proto.v1.Member.newBuilder()
        .setId(p.id())
        .setPeerAddress(p.peerAddress())
        .setClientAddress(p.clientAddress())
        .build();
  }

  /**
   * Acquires {@code prefix}0 … {@code prefix}(n-1) through node {@code via}, each by its own
   * holder; fails unless all are granted.
   */
  public Map<String, Long> acquireMany(String via, String prefix, int n) {
    Map<String, Long> tokens = new java.util.HashMap<>();
    for (int i = 0; i < n; i++) {
      io.leasehold.proto.v1.AcquireResponse r =
          leases(via).acquire(Requests.acquire(prefix + i, "runner-" + i, 120));
      if (r.getOutcome() != io.leasehold.proto.v1.Outcome.GRANTED) {
        throw new AssertionError("acquiring " + prefix + i + " through " + via + ": " + r);
      }
      tokens.put(prefix + i, r.getLease().getToken());
    }
    return tokens;
  }

  /**
   * Waits until node {@code node} serves each lease in {@code tokens} (name to token) from its own
   * state.
   */
  public void awaitHeldOn(String node, Map<String, Long> tokens) {
    await(
        node + " holds every lease",
        Duration.ofSeconds(30),
        () ->
            tokens.entrySet().stream()
                .allMatch(
                    e -> {
                      var r = leases(node).get(Requests.staleGet(e.getKey()));
                      return r.getFound() && r.getLease().getToken() == e.getValue();
                    }));
  }

  public Peer peer(String id) {
    return peers.stream().filter(p -> p.id().equals(id)).findFirst().orElseThrow();
  }

  /** Stops a node (closes its servers and store); its data dir stays for {@link #startNode}. */
  public void stopNode(String id) {
    stopNode(id, LeaseholdNode::close);
  }

  /**
   * Stops a node as SIGTERM does ({@link LeaseholdNode#stop}: its leaderships handed over first);
   * its data dir stays for {@link #startNode}.
   */
  public void stopNodeCleanly(String id) {
    stopNode(id, LeaseholdNode::stop);
  }

  private void stopNode(String id, Consumer<LeaseholdNode> how) {
    LeaseholdNode node = nodes.put(id, null);
    if (node != null) {
      ManagedChannel ch = channels.remove(id);
      if (ch != null) {
        ch.shutdownNow();
      }
      how.accept(node);
    }
  }

  public LeaseholdNode node(String id) {
    LeaseholdNode n = nodes.get(id);
    if (n == null) {
      throw new IllegalStateException(id + " is not running");
    }
    return n;
  }

  /**
   * Election timeouts of 1-1.9 s (near the most a 2 s minimum TTL allows): fewer spurious elections
   * than the harness's default on a loaded machine, for tests that count on leadership holding
   * still. {@code TestCluster.start(3, dir, TestCluster::steadyElections)}.
   */
  public static NodeConfig.Builder steadyElections(NodeConfig.Builder b) {
    return b.electionTimeout(Duration.ofMillis(1000), Duration.ofMillis(1900));
  }

  /** The running nodes' client (gRPC API) addresses, host:port. */
  public List<String> clientAddresses() {
    return running().stream().map(LeaseholdNode::clientAddress).toList();
  }

  public List<LeaseholdNode> running() {
    return nodes.values().stream().filter(n -> n != null).toList();
  }

  public List<String> ids() {
    return peers.stream().map(Peer::id).toList();
  }

  public Optional<LeaseholdNode> leader() {
    return running().stream().filter(LeaseholdNode::isLeader).findFirst();
  }

  /** Waits until a running node leads with its expiry ticker promoted (leader ready). */
  public LeaseholdNode awaitLeader() {
    await(
        "a ready leader",
        Duration.ofSeconds(30),
        () -> leader().filter(l -> l.diagnostics().ticker().scheduler().isActive()).isPresent());
    return leader().orElseThrow();
  }

  public List<LeaseholdNode> followers() {
    return running().stream().filter(n -> !n.isLeader()).toList();
  }

  /** Waits until every running node has applied at least what the leader has committed now. */
  public void awaitConverged() {
    LeaseholdNode leader = awaitLeader();
    long commit = leader.ratis().division().getRaftLog().getLastCommittedIndex();
    await(
        "every node applied " + commit,
        Duration.ofSeconds(30),
        () ->
            running().stream()
                .allMatch(n -> n.ratis().division().getInfo().getLastAppliedIndex() >= commit));
  }

  public LeasesGrpc.LeasesBlockingStub leases(String id) {
    return LeasesGrpc.newBlockingStub(channel(id)).withInterceptors(PER_CALL_DEADLINE);
  }

  public ClusterGrpc.ClusterBlockingStub cluster(String id) {
    return ClusterGrpc.newBlockingStub(channel(id)).withInterceptors(PER_CALL_DEADLINE);
  }

  public io.leasehold.proto.v1.RegistryGrpc.RegistryBlockingStub registry(String id) {
    return io.leasehold.proto.v1.RegistryGrpc.newBlockingStub(channel(id))
        .withInterceptors(PER_CALL_DEADLINE);
  }

  public io.leasehold.proto.v1.AdminGrpc.AdminBlockingStub admin(String id) {
    return io.leasehold.proto.v1.AdminGrpc.newBlockingStub(channel(id))
        .withInterceptors(PER_CALL_DEADLINE);
  }

  public io.leasehold.proto.v1.RoutingGrpc.RoutingBlockingStub routing(String id) {
    return io.leasehold.proto.v1.RoutingGrpc.newBlockingStub(channel(id))
        .withInterceptors(PER_CALL_DEADLINE);
  }

  public ManagedChannel channel(String id) {
    return channels.computeIfAbsent(
        id, k -> io.grpc.Grpc.newChannelBuilder(node(k).clientAddress(), credentials).build());
  }

  /**
   * The credentials of the channels the stubs use from now on (default plaintext), e.g. TLS with a
   * client certificate.
   */
  public void useCredentials(io.grpc.ChannelCredentials credentials) {
    this.credentials = credentials;
    channels.values().forEach(ManagedChannel::shutdownNow);
    channels.clear();
  }

  /**
   * Every call gets its own 20 s deadline (a stub's withDeadlineAfter is fixed when the stub is
   * made).
   */
  private static final ClientInterceptor PER_CALL_DEADLINE =
      new ClientInterceptor() {
        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(
            MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
          return next.newCall(method, options.withDeadlineAfter(20, TimeUnit.SECONDS));
        }
      };

  /** The node's whole state in snapshot format: byte-equal dumps mean identical replicas. */
  public static byte[] dump(LeaseholdNode node) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      node.stateMachine().core().store().writeSnapshot(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /**
   * {@code GET path} on the node's metrics port (/metrics, /healthz); the node must serve metrics.
   */
  public static HttpResponse<String> httpGet(LeaseholdNode node, String path) {
    return httpGet(node, path, UnaryOperator.identity());
  }

  /**
   * As {@link #httpGet(LeaseholdNode, String)}, with the request as {@code request} makes it
   * (headers, a longer timeout).
   */
  public static HttpResponse<String> httpGet(
      LeaseholdNode node, String path, UnaryOperator<HttpRequest.Builder> request) {
    URI uri = URI.create("http://127.0.0.1:" + node.metricsPort().orElseThrow() + path);
    try {
      return HTTP.send(
          request.apply(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))).build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public static void await(String what, Duration timeout, BooleanSupplier condition) {
    await(() -> what, timeout, condition);
  }

  /**
   * As {@link #await(String, Duration, BooleanSupplier)}, describing the state at the time it gave
   * up.
   */
  public static void await(Supplier<String> what, Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (RuntimeException e) {
        // Not yet: nodes may be mid-election or restarting.
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "timed out after " + timeout.toMillis() + " ms waiting for " + what.get());
      }
      try {
        TimeUnit.MILLISECONDS.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what.get());
      }
    }
  }

  /**
   * An Acquire through {@code node}, sent again while the cluster answers UNAVAILABLE (a lease
   * group electing a leader on a busy machine), within {@code timeout}.
   */
  public io.leasehold.proto.v1.AcquireResponse acquireRetrying(
      String node, io.leasehold.proto.v1.AcquireRequest request, Duration timeout) {
    return eventually(
        "an answer to " + request.getName() + " through " + node,
        timeout,
        () -> {
          try {
            return Optional.of(leases(node).acquire(request));
          } catch (io.grpc.StatusRuntimeException e) {
            if (e.getStatus().getCode() == io.grpc.Status.Code.UNAVAILABLE) {
              return Optional.empty();
            }
            throw e;
          }
        });
  }

  public static <T> T eventually(String what, Duration timeout, Supplier<Optional<T>> attempt) {
    Object[] box = new Object[1];
    await(
        what,
        timeout,
        () -> {
          Optional<T> r = attempt.get();
          r.ifPresent(v -> box[0] = v);
          return r.isPresent();
        });
    @SuppressWarnings("unchecked")
    T value = (T) box[0];
    return value;
  }

  /** Free ports for nodes: {@link LoopbackPorts#free}. */
  public static int[] freePorts(int count) throws IOException {
    return LoopbackPorts.free(count);
  }

  @Override
  public void close() {
    channels.values().forEach(ManagedChannel::shutdownNow);
    channels.clear();
    for (String id : new ArrayList<>(nodes.keySet())) {
      stopNode(id);
    }
  }
}
