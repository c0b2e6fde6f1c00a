package io.leasehold.testkit;

import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.LoopbackPorts;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.Peer;
import io.leasehold.server.expiry.ExpiryClock;
import io.leasehold.statemachine.core.LogFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * Real Leasehold nodes inside the test's JVM: Ratis, RocksDB and the gRPC API, each node with its
 * own data directory and loopback ports picked free. One node is what {@code leasehold server
 * --standalone} runs; three are a cluster that survives the loss of one. A test talks to it through
 * the SDK ({@link #client()}, {@link #clientBuilder()}) or any gRPC client ({@link #endpoints()}),
 * and breaks it on purpose: {@link #kill}, {@link #restart}, {@link #isolate}.
 *
 * <pre>{@code
 * try (LeaseholdCluster cluster = LeaseholdCluster.start(3)) {
 *   LeaseOptions ttl = LeaseOptions.defaults().withTtl(Duration.ofSeconds(30));
 *   Lease lease = cluster.client().acquire("jobs/nightly", ttl).join();
 *   cluster.kill(cluster.leader());
 *   ...
 * }
 * }</pre>
 *
 * <p>With JUnit 5, {@link LeaseholdExtension} starts and stops one for a test class. The nodes run
 * with the server's defaults except for their election timeouts (1 to 1.9 s, steadier than a
 * deployment's on a busy test machine; a failover takes 1 to 4 s). A lease ends when its TTL has
 * passed on the leader's clock, which runs in real time unless the test moves it forward with
 * {@link #advanceClock}: a 30-second TTL then runs out at once.
 *
 * <p>Not thread-safe: one test thread drives it.
 */
public final class LeaseholdCluster implements AutoCloseable {
  private static final Duration ELECTION_MIN = Duration.ofMillis(1000);
  private static final Duration ELECTION_MAX = Duration.ofMillis(1900);

  private final Path dataDir;
  private final boolean ownsDataDir;
  private final List<Peer> peers;
  private final BiFunction<String, NodeConfig.Builder, NodeConfig.Builder> configure;
  private final Duration readyTimeout;
  private final Map<String, LeaseholdNode> running = new LinkedHashMap<>();
  private final Set<String> isolated = new LinkedHashSet<>();

  /** Every node's expiry clock: one, so that whichever node leads sees a move. */
  private final ExpiryClock clock = new ExpiryClock();

  private LeaseholdClient client;

  private LeaseholdCluster(Builder b, Path dataDir, boolean ownsDataDir, List<Peer> peers) {
    this.dataDir = dataDir;
    this.ownsDataDir = ownsDataDir;
    this.peers = List.copyOf(peers);
    this.configure = b.configure;
    this.readyTimeout = b.readyTimeout;
  }

  /**
   * Starts {@code nodes} nodes (1 for a standalone node) on free ports in a temporary directory,
   * deleted by {@link #close}, and waits until they serve.
   *
   * @param nodes how many nodes, 1 to 9
   * @return the running cluster
   * @throws IOException if a node cannot start
   */
  public static LeaseholdCluster start(int nodes) throws IOException {
    return builder().nodes(nodes).start();
  }

  /**
   * A builder, for a data directory of the test's own or node settings.
   *
   * @return a builder of a standalone node until {@link Builder#nodes} says otherwise
   */
  public static Builder builder() {
    return new Builder();
  }

  /** How a {@link LeaseholdCluster} is started. */
  public static final class Builder {
    private int nodes = 1;
    private Path dataDir;
    private BiFunction<String, NodeConfig.Builder, NodeConfig.Builder> configure = (id, b) -> b;
    private Duration readyTimeout = Duration.ofSeconds(90);

    private Builder() {}

    /**
     * How many nodes.
     *
     * @param nodes 1 (a standalone node) to 9
     * @return this builder
     */
    public Builder nodes(int nodes) {
      if (nodes < 1 || nodes > 9) {
        throw new IllegalArgumentException("nodes: " + nodes + " is not between 1 and 9");
      }
      this.nodes = nodes;
      return this;
    }

    /**
     * Where the nodes keep their data, one subdirectory a node ({@code n1}, {@code n2}, ...); the
     * cluster leaves it in place when it closes (e.g. a JUnit {@code @TempDir}). It must be empty
     * or not exist yet: a cluster's data holds its members' ports, and a new cluster gets new ones.
     * Default: a new temporary directory, deleted when the cluster closes.
     *
     * @param dataDir an empty or new directory
     * @return this builder
     */
    public Builder dataDir(Path dataDir) {
      this.dataDir = Objects.requireNonNull(dataDir, "dataDir");
      return this;
    }

    /**
     * Settings for every node, applied at each start of it (restarts too), after the kit's own
     * (identity, peers, data directory, election timeouts), e.g. {@code b -> b.maxRenewItems(10)}.
     *
     * @param configure changes a node's configuration
     * @return this builder
     */
    public Builder configure(UnaryOperator<NodeConfig.Builder> configure) {
      Objects.requireNonNull(configure, "configure");
      return configure((id, b) -> configure.apply(b));
    }

    /**
     * As {@link #configure(UnaryOperator)}, per node id.
     *
     * @param configure changes the configuration of the node with the given id
     * @return this builder
     */
    public Builder configure(BiFunction<String, NodeConfig.Builder, NodeConfig.Builder> configure) {
      this.configure = Objects.requireNonNull(configure, "configure");
      return this;
    }

    /**
     * How long {@link #start()}, {@link LeaseholdCluster#restart} and the waits for a leader may
     * take before they fail. Default 90 s (a loaded CI machine).
     *
     * @param timeout a positive duration
     * @return this builder
     */
    public Builder readyTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("readyTimeout: " + timeout + " is not positive");
      }
      this.readyTimeout = timeout;
      return this;
    }

    /**
     * Starts every node and waits until a leader serves and every node runs the newest log format,
     * as a deployed cluster does.
     *
     * @return the running cluster
     * @throws IOException if a node cannot start or bind its ports
     */
    public LeaseholdCluster start() throws IOException {
      if (dataDir != null && Files.isDirectory(dataDir)) {
        try (Stream<Path> entries = Files.list(dataDir)) {
          if (entries.findAny().isPresent()) {
            throw new IllegalArgumentException(
                "dataDir: " + dataDir + " is not empty (a new cluster needs an empty directory)");
          }
        }
      }
      int[] ports = LoopbackPorts.free(nodes * 2);
      List<Peer> peers = new ArrayList<>();
      for (int i = 0; i < nodes; i++) {
        peers.add(new Peer("n" + (i + 1), "127.0.0.1", ports[2 * i], ports[2 * i + 1]));
      }
      boolean owns = dataDir == null;
      Path dir = owns ? Files.createTempDirectory("leasehold-testkit") : dataDir;
      LeaseholdCluster cluster = new LeaseholdCluster(this, dir, owns, peers);
      try {
        for (Peer p : peers) {
          cluster.startNode(p.id());
        }
        cluster.awaitReady();
      } catch (IOException | RuntimeException | Error e) {
        try {
          cluster.close();
        } catch (RuntimeException | Error closing) {
          e.addSuppressed(closing);
        }
        throw e;
      }
      return cluster;
    }
  }

  /**
   * The nodes' ids, {@code n1} to {@code nN}, running or not.
   *
   * @return every node's id
   */
  public List<String> nodeIds() {
    return peers.stream().map(Peer::id).toList();
  }

  /**
   * Every node's client address ({@code 127.0.0.1:PORT}, comma-separated, in node order), running
   * or not: what {@code --endpoints}, {@code leasehold.endpoints} or a client's endpoint list
   * takes. A node keeps its ports across restarts.
   *
   * @return the endpoints, e.g. {@code 127.0.0.1:20001,127.0.0.1:20003,127.0.0.1:20005}
   */
  public String endpoints() {
    return String.join(",", addresses());
  }

  /**
   * As {@link #endpoints()}, as a list.
   *
   * @return every node's client address
   */
  public List<String> addresses() {
    return peers.stream().map(Peer::clientAddress).toList();
  }

  /**
   * One node's client address.
   *
   * @param node a node id
   * @return its {@code host:port}
   */
  public String address(String node) {
    return peer(node).clientAddress();
  }

  /**
   * A client builder for this cluster: every node's endpoint, and a 20 s request timeout with 3 s
   * per attempt (a failover takes seconds on a test machine). Build as many clients as a test needs
   * and close each.
   *
   * @return a new builder
   */
  public LeaseholdClientBuilder clientBuilder() {
    return LeaseholdClient.builder()
        .endpoints(addresses())
        .requestTimeout(Duration.ofSeconds(20))
        .attemptTimeout(Duration.ofSeconds(3));
  }

  /**
   * A client shared by whoever asks, made on first use from {@link #clientBuilder()} (and again if
   * a test closed it) and closed with the cluster.
   *
   * @return the shared client
   */
  public LeaseholdClient client() {
    if (client == null || client.isClosed()) {
      client = clientBuilder().build();
    }
    return client;
  }

  /**
   * Waits until one node, not isolated, leads and is ready to serve (its expiry ticker runs), and
   * no other node that is not isolated still thinks it leads.
   *
   * @return the leader's id
   * @throws AssertionError if there is no such leader within the ready timeout
   */
  public String leader() {
    String[] leader = new String[1];
    await(
        "a ready leader",
        () -> {
          List<LeaseholdNode> leaders =
              running.values().stream()
                  .filter(n -> !isolated.contains(n.id()) && n.isLeader())
                  .toList();
          if (leaders.size() != 1
              || !leaders.get(0).diagnostics().ticker().scheduler().isActive()) {
            return false;
          }
          leader[0] = leaders.get(0).id();
          return true;
        });
    return leader[0];
  }

  /**
   * Moves the clock that the nodes expire leases by forward, and returns once the leader has acted
   * on it and every running node applied what it did: a lease whose TTL the move used up is then
   * ended (its holder hears of it as of a real expiry), and so are sessions, lock-delays, timed
   * bans and transfer offers that came due. Wall-clock stamps (a lease's {@code expiresAt}) do not
   * move, and nor does a client's clock: an SDK client still renews its leases in real time, so a
   * move longer than a TTL ends the leases of every client, alive or not, that did not renew in
   * between.
   *
   * @param by how far, positive
   * @throws IllegalArgumentException if {@code by} is not positive
   * @throws AssertionError if no leader acts on it within the ready timeout
   */
  public void advanceClock(Duration by) {
    clock.advance(by);
    long deadline = System.nanoTime() + readyTimeout.toNanos();
    while (true) {
      LeaseholdNode leader = running.get(leader());
      try {
        leader.diagnostics().ticker().nextTurn().get(2, TimeUnit.SECONDS);
        long applied = leader.stateMachine().getLastAppliedTermIndex().getIndex();
        await(
            "every node to apply revision " + applied,
            () ->
                running.values().stream()
                    .filter(n -> !isolated.contains(n.id()))
                    .allMatch(
                        n -> n.stateMachine().getLastAppliedTermIndex().getIndex() >= applied));
        return;
      } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
        // Leadership moved meanwhile, or the turn failed: the next leader's turn.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for the clock to move");
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "timed out after "
                + readyTimeout.toMillis()
                + " ms waiting for a leader to act on the clock");
      }
    }
  }

  /**
   * The running nodes, not isolated, that do not lead now (with no leader, every one of them).
   *
   * @return their ids
   */
  public List<String> followers() {
    return running.values().stream()
        .filter(n -> !isolated.contains(n.id()) && !n.isLeader())
        .map(LeaseholdNode::id)
        .toList();
  }

  /**
   * Stops a node: its servers close and its connections drop, as a crash looks to the others. Its
   * data stays for {@link #restart}. Stopping a node that is not running does nothing.
   *
   * @param node a node id
   */
  public void kill(String node) {
    peer(node);
    LeaseholdNode n = running.remove(node);
    if (n != null) {
      n.close();
    }
  }

  /**
   * Starts a node again from its data, on its old ports (stopping it first if it runs), and waits
   * until the cluster has a ready leader. A node that was isolated stays isolated.
   *
   * @param node a node id
   * @throws IOException if it cannot start
   */
  public void restart(String node) throws IOException {
    kill(node);
    startNode(node);
    leader();
  }

  /**
   * Cuts a node off from the other nodes, both ways, as a network partition would: Raft messages
   * between it and them are dropped, and it forwards no client write to them. Clients can still
   * reach it; a write sent to it finds no leader and fails when the client's request timeout
   * passes. An isolated leader loses its leadership once the others elect another; an isolated
   * follower falls behind. {@link #heal} joins it again.
   *
   * @param node a node id
   */
  public void isolate(String node) {
    peer(node);
    isolated.add(node);
    applyIsolation();
  }

  /**
   * Joins an isolated node to the others again; what was dropped meanwhile is lost, as on a
   * network, and Raft catches it up.
   *
   * @param node a node id
   */
  public void heal(String node) {
    peer(node);
    isolated.remove(node);
    applyIsolation();
  }

  /** Joins every isolated node again. */
  public void healAll() {
    isolated.clear();
    applyIsolation();
  }

  /**
   * Whether a node runs (not killed).
   *
   * @param node a node id
   * @return true if it runs
   */
  public boolean isRunning(String node) {
    peer(node);
    return running.containsKey(node);
  }

  /**
   * Whether a node is isolated.
   *
   * @param node a node id
   * @return true between {@link #isolate} and {@link #heal}
   */
  public boolean isIsolated(String node) {
    peer(node);
    return isolated.contains(node);
  }

  /**
   * A running node's server, for what the kit does not cover (its metrics, its state machine). Its
   * API is the server's and may change between releases.
   *
   * @param node a node id
   * @return the node
   * @throws IllegalStateException if it is not running
   */
  public LeaseholdNode node(String node) {
    peer(node);
    LeaseholdNode n = running.get(node);
    if (n == null) {
      throw new IllegalStateException(node + " is not running");
    }
    return n;
  }

  /**
   * Brings the cluster back to whole after a test that broke it: starts every killed node, heals
   * every isolated one, and waits for a ready leader with every node caught up with its log.
   *
   * @throws IOException if a node cannot start
   */
  public void restore() throws IOException {
    healAll();
    for (String id : nodeIds()) {
      if (!running.containsKey(id)) {
        startNode(id);
      }
    }
    // leader() waits until a healed node that still thought it led has stepped down.
    String leader = awaitReady();
    long commit = node(leader).ratis().division().getRaftLog().getLastCommittedIndex();
    await(
        "every node applied " + commit,
        () ->
            running.values().stream()
                .allMatch(n -> n.ratis().division().getInfo().getLastAppliedIndex() >= commit));
  }

  /**
   * Closes the shared client, stops every node and, unless the test gave the directory, deletes the
   * nodes' data.
   */
  @Override
  public void close() {
    RuntimeException failure = null;
    List<Runnable> steps = new ArrayList<>();
    LeaseholdClient shared = client;
    client = null;
    if (shared != null) {
      steps.add(shared::close);
    }
    for (String id : new ArrayList<>(running.keySet())) {
      steps.add(() -> kill(id));
    }
    if (ownsDataDir) {
      steps.add(() -> deleteTree(dataDir));
    }
    for (Runnable step : steps) {
      try {
        step.run();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private void startNode(String id) throws IOException {
    NodeConfig.Builder b =
        NodeConfig.builder()
            .id(id)
            .peers(peers)
            .dataDir(dataDir.resolve(id))
            .electionTimeout(ELECTION_MIN, ELECTION_MAX);
    // The node's own isolation is set before it can send or receive anything.
    LeaseholdNode node =
        LeaseholdNode.start(
            configure.apply(id, b).build(),
            clock,
            n -> n.diagnostics().peerTraffic().cutOff(cutOffFor(id)));
    running.put(id, node);
  }

  /** Waits for a ready leader and the newest log format on every node; returns the leader. */
  private String awaitReady() {
    String leader = leader();
    await(
        "every node applied the log format " + LogFormat.NEWEST,
        () ->
            running.values().stream()
                .allMatch(n -> n.stateMachine().core().logFormat() == LogFormat.NEWEST));
    return leader;
  }

  /** The peers whose Raft messages {@code id} drops. */
  private Set<String> cutOffFor(String id) {
    if (isolated.contains(id)) {
      Set<String> others = new LinkedHashSet<>(nodeIds());
      others.remove(id);
      return others;
    }
    return isolated;
  }

  private void applyIsolation() {
    running.forEach((id, n) -> n.diagnostics().peerTraffic().cutOff(cutOffFor(id)));
  }

  private Peer peer(String id) {
    return peers.stream()
        .filter(p -> p.id().equals(id))
        .findFirst()
        .orElseThrow(
            () -> new IllegalArgumentException("node: " + id + " is not one of " + nodeIds()));
  }

  private void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + readyTimeout.toNanos();
    while (true) {
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (RuntimeException e) {
        // Not yet: a node may be mid-election or starting.
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "timed out after " + readyTimeout.toMillis() + " ms waiting for " + what);
      }
      try {
        TimeUnit.MILLISECONDS.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what);
      }
    }
  }

  private static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("deleting " + dir, e);
    }
  }
}
