package io.leasehold.jepsen.cluster;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * N server processes from the packaged jar, each with its own data dir, ports (or network
 * namespace) and log. Cleans up on {@link #close()}, from a shutdown hook, and — if the test JVM is
 * killed outright — from a watchdog shell process that outlives it and kills the nodes and removes
 * the namespaces.
 *
 * <p>With {@link Certificates}, every node runs mutual TLS on both transports and requires client
 * certificates ({@code --client-cert-auth}); the harness then talks to the nodes as one client
 * identity per name: {@link #channel(int)} as {@link #OPERATOR} (status, policy, membership, final
 * reads), {@link #channel(int, String)} as any other, such as a lease holder. The operator is the
 * nodes' initial admin, and grants every other identity the {@code client} role before its first
 * call ({@link #authorize}), as an operator of a real cluster would.
 */
public final class Cluster implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Cluster.class);

  /**
   * The client identity of the harness's own calls: cluster status, policy, membership, final
   * reads.
   */
  public static final String OPERATOR = "admin";

  private final Path dir;
  private final Network network;
  private final Optional<Faketime> faketime;
  private final String faketimeSkipReason;
  private final Optional<Certificates> tls;
  private final List<NodeProcess> nodes = new ArrayList<>();

  /**
   * Channels to every node, per client identity; without TLS every identity shares the operator's.
   */
  private final Map<String, List<ManagedChannel>> channels = new HashMap<>();

  /** The identities granted the client role, or being granted it. */
  private final ConcurrentHashMap<String, CompletableFuture<Void>> authorized =
      new ConcurrentHashMap<>();

  private final Thread hook = new Thread(this::close, "jepsen-cluster-cleanup");
  private Process watchdog;
  private boolean closed;

  private Cluster(
      Path dir,
      Network network,
      Optional<Faketime> faketime,
      String faketimeSkipReason,
      Optional<Certificates> tls) {
    this.dir = dir;
    this.network = network;
    this.faketime = faketime;
    this.faketimeSkipReason = faketimeSkipReason;
    this.tls = tls;
  }

  /**
   * Starts {@code n} nodes of the jar in {@code dir}, on network namespaces when this machine
   * allows it.
   */
  public static Cluster start(int n, Path jar, Path dir) {
    return start(n, jar, dir, Optional.empty());
  }

  /**
   * As {@link #start(int, Path, Path)}; with {@code tls}, mutual TLS on the client, metrics and
   * Raft ports of every node, client certificates required.
   */
  public static Cluster start(int n, Path jar, Path dir, Optional<Certificates> tls) {
    return start(n, jar, dir, tls, List.of());
  }

  /**
   * As {@link #start(int, Path, Path, Optional)}, each node's {@code server} command given {@code
   * serverArgs} too (e.g. {@code --lease-groups 3}), on every start, a rejoin's included.
   */
  public static Cluster start(
      int n, Path jar, Path dir, Optional<Certificates> tls, List<String> serverArgs) {
    if (!Files.isReadable(jar)) {
      throw new IllegalStateException(
          "the server jar " + jar.toAbsolutePath() + " is missing: build the cli module first");
    }
    Optional<String> noNamespaces = NamespaceNetwork.unsupportedReason();
    Network network =
        noNamespaces.isEmpty()
            ? NamespaceNetwork.create(n)
            : new LoopbackNetwork(n, noNamespaces.get());
    StringBuilder why = new StringBuilder();
    Optional<Faketime> faketime = Faketime.find(why);
    Cluster c = new Cluster(dir, network, faketime, why.toString(), tls);
    try {
      c.launch(n, jar, serverArgs);
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
    return c;
  }

  private void launch(int n, Path jar, List<String> serverArgs) {
    try {
      Files.createDirectories(dir.resolve("pids"));
      Runtime.getRuntime().addShutdownHook(hook);
      startWatchdog();
      String peers =
          IntStream.range(0, n)
              .mapToObj(
                  i ->
                      "n"
                          + (i + 1)
                          + "="
                          + network.host(i)
                          + ":"
                          + network.peerPort(i)
                          + ":"
                          + network.clientPort(i))
              .collect(Collectors.joining(","));
      for (int i = 0; i < n; i++) {
        String id = "n" + (i + 1);
        Path clock = dir.resolve(id + ".faketime");
        Files.writeString(clock, "+0s\n");
        Path data = dir.resolve("data").resolve(id);
        List<String> args =
            new ArrayList<>(
                List.of(
                    "server",
                    "--id",
                    id,
                    "--peers",
                    peers,
                    "--data-dir",
                    data.toString(),
                    "--request-timeout",
                    "5s",
                    "--fault-control",
                    dir.resolve(id + ".faults").toString()));
        if (tls.isPresent()) {
          args.addAll(tlsArgs(tls.get(), id, network.host(i)));
        }
        args.addAll(serverArgs);
        List<String> env = faketime.map(f -> f.environment(clock)).orElse(List.of());
        // Beside the data directories, so that the run removes it with them.
        Path tmp = Files.createDirectories(dir.resolve("data").resolve("tmp").resolve(id));
        nodes.add(
            new NodeProcess(
                i,
                id,
                NodeProcess.javaCommand(network.launcher(i), jar, tmp, args),
                env,
                dir.resolve(id + ".log"),
                dir.resolve("pids").resolve(id + ".pid"),
                clock,
                data));
      }
      nodes.forEach(NodeProcess::start);
      LOG.info(
          "started {} nodes on {}; {}; clocks: {}",
          n,
          network,
          transport(),
          faketime.map(Object::toString).orElse("not fakeable: " + faketimeSkipReason));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The server options of mutual TLS on both transports, with client certificates required. */
  static List<String> tlsArgs(Certificates tls, String id, String host) {
    Certificates.Pair node = tls.node(id, host);
    String ca = tls.ca().toString();
    return List.of(
        "--tls-cert-file",
        node.cert().toString(),
        "--tls-key-file",
        node.key().toString(),
        "--tls-ca-file",
        ca,
        "--client-cert-auth",
        "--initial-admin",
        OPERATOR,
        "--peer-tls-cert-file",
        node.cert().toString(),
        "--peer-tls-key-file",
        node.key().toString(),
        "--peer-tls-ca-file",
        ca);
  }

  /** How clients and members talk to the nodes, for logs and reports. */
  public String transport() {
    return tls.isPresent()
        ? "mutual TLS on the client, metrics and Raft ports, client certificates required (--client-cert-auth); "
            + "each client identity its own certificate, CN = its name"
        : "plaintext";
  }

  private void startWatchdog() throws IOException {
    Path script = dir.resolve("watchdog.sh");
    StringBuilder s =
        new StringBuilder(
                "#!/bin/sh\n# Kills the nodes and removes the network if the test JVM dies without cleaning up.\n")
            .append("while kill -0 ")
            .append(ProcessHandle.current().pid())
            .append(" 2>/dev/null && [ ! -e '")
            .append(dir.resolve("closed"))
            .append("' ]; do sleep 1; done\n")
            .append("[ -e '")
            .append(dir.resolve("closed"))
            .append("' ] && exit 0\n")
            .append("for f in '")
            .append(dir.resolve("pids"))
            .append("'/*.pid; do [ -f \"$f\" ] || continue; p=$(cat \"$f\"); ")
            .append("kill -CONT $p 2>/dev/null; kill -9 $p 2>/dev/null; done\n");
    network.cleanupCommands().forEach(l -> s.append(l).append('\n'));
    Files.writeString(script, s.toString());
    watchdog =
        new ProcessBuilder("setsid", "sh", script.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("watchdog.log").toFile())
            .start();
  }

  public List<NodeProcess> nodes() {
    return nodes;
  }

  public NodeProcess node(int i) {
    return nodes.get(i);
  }

  public int size() {
    return nodes.size();
  }

  public Network network() {
    return network;
  }

  public Optional<Faketime> faketime() {
    return faketime;
  }

  public String faketimeSkipReason() {
    return faketimeSkipReason;
  }

  public Path dir() {
    return dir;
  }

  /**
   * Tells node {@code i} how to hold the Raft traffic it receives: a line of the server's hidden
   * {@code --fault-control} file ({@code delay PEER MIN_MS MAX_MS SEED}, or {@code none}).
   */
  public void faultControl(int i, String line) {
    Path file = dir.resolve(node(i).id() + ".faults");
    Path partial = dir.resolve(node(i).id() + ".faults.tmp");
    try {
      Files.writeString(partial, line + "\n");
      Files.move(
          partial,
          file,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("writing " + file, e);
    }
  }

  public String endpoint(int i) {
    return network.host(i) + ":" + network.clientPort(i);
  }

  public List<String> endpoints() {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      out.add(endpoint(i));
    }
    return out;
  }

  /** The certificates the nodes run with, if they run TLS. */
  public Optional<Certificates> tls() {
    return tls;
  }

  /**
   * With TLS, grants {@code identity} the built-in {@code client} role, as the operator, unless
   * done before: through whichever node answers, retried until a 60 s deadline, since a fault may
   * be in force. Concurrent callers for one identity wait for the same grant.
   */
  public void authorize(String identity) {
    if (tls.isEmpty() || identity.equals(OPERATOR)) {
      return;
    }
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> grant = authorized.putIfAbsent(identity, mine);
    if (grant != null) {
      grant.join();
      return;
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    RuntimeException last = null;
    for (int attempt = 0; System.nanoTime() < deadline; attempt++) {
      int i = attempt % nodes.size();
      if (!nodes.get(i).isRunning() || nodes.get(i).isPaused()) {
        continue;
      }
      try {
        AuthGrpc.newBlockingStub(channel(i))
            .withDeadlineAfter(3, TimeUnit.SECONDS)
            .grantRole(
                GrantRoleRequest.newBuilder().setIdentity(identity).setRole("client").build());
        mine.complete(null);
        return;
      } catch (StatusRuntimeException e) {
        last = e;
        pause(Duration.ofMillis(200));
      }
    }
    IllegalStateException failed =
        new IllegalStateException(
            "could not grant " + identity + " the client role within 60 s", last);
    authorized.remove(identity);
    mine.completeExceptionally(failed);
    throw failed;
  }

  /** A channel to node {@code i} as {@link #OPERATOR}. */
  public ManagedChannel channel(int i) {
    return channelOf(i, OPERATOR);
  }

  /**
   * A channel to node {@code i} as client {@code identity}: with TLS, it presents the certificate
   * whose CN is {@code identity} (made on first use); without, every identity shares the operator's
   * plaintext channels.
   */
  public ManagedChannel channel(int i, String identity) {
    authorize(identity);
    return channelOf(i, identity);
  }

  private synchronized ManagedChannel channelOf(int i, String identity) {
    if (closed) {
      throw new IllegalStateException("the cluster is closed");
    }
    String key = tls.isPresent() ? identity : OPERATOR;
    List<ManagedChannel> own = channels.get(key);
    if (own == null) {
      ChannelCredentials credentials =
          tls.map(t -> credentials(t, identity)).orElse(InsecureChannelCredentials.create());
      own = new ArrayList<>();
      for (int n = 0; n < nodes.size(); n++) {
        own.add(
            Grpc.newChannelBuilderForAddress(network.host(n), network.clientPort(n), credentials)
                .build());
      }
      channels.put(key, own);
    }
    return own.get(i);
  }

  private static ChannelCredentials credentials(Certificates tls, String identity) {
    Certificates.Pair client = tls.client(identity);
    try {
      return TlsChannelCredentials.newBuilder()
          .trustManager(tls.ca().toFile())
          .keyManager(client.cert().toFile(), client.key().toFile())
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException("the TLS files of client " + identity, e);
    }
  }

  /**
   * Node {@code i}'s view of the cluster, if it answers within 3 s (a starved node answers slowly).
   */
  public Optional<StatusResponse> status(int i) {
    if (!nodes.get(i).isRunning() || nodes.get(i).isPaused()) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          ClusterGrpc.newBlockingStub(channel(i))
              .withDeadlineAfter(3, TimeUnit.SECONDS)
              .status(StatusRequest.getDefaultInstance()));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /** The node that says it leads, with the highest term among those that do. */
  public Optional<Integer> leader() {
    int best = -1;
    long term = -1;
    for (int i = 0; i < nodes.size(); i++) {
      Optional<StatusResponse> s = status(i);
      if (s.isPresent() && s.get().getRole() == Role.LEADER && s.get().getTerm() > term) {
        best = i;
        term = s.get().getTerm();
      }
    }
    return best < 0 ? Optional.empty() : Optional.of(best);
  }

  public int awaitLeader(Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      Optional<Integer> l = leader();
      if (l.isPresent()) {
        return l.get();
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("no leader within " + within + "\n" + tails(30));
      }
      pause(Duration.ofMillis(200));
    }
  }

  /** Waits until every running node answers and agrees on a leader. */
  public void awaitAllUp(Duration within) {
    awaitCondition(
        "every node answers and knows the leader",
        within,
        () -> {
          String leader = null;
          for (int i = 0; i < nodes.size(); i++) {
            Optional<StatusResponse> s = status(i);
            if (s.isEmpty()
                || s.get().getLeaderId().isEmpty()
                || leader != null && !leader.equals(s.get().getLeaderId())) {
              return false;
            }
            leader = s.get().getLeaderId();
          }
          return true;
        });
  }

  public void awaitCondition(String what, Duration within, BooleanSupplier condition) {
    long deadline = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "not true within " + within + ": " + what + "\n" + tails(30));
      }
      pause(Duration.ofMillis(200));
    }
  }

  /** The last lines of every node's log, for reports and failure messages. */
  public String tails(int lines) {
    StringBuilder b = new StringBuilder();
    for (NodeProcess n : nodes) {
      b.append("---- ")
          .append(n.id())
          .append(" (")
          .append(n.log().getFileName())
          .append(") ----\n")
          .append(n.tail(lines))
          .append('\n');
    }
    return b.toString();
  }

  static void pause(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    channels.values().forEach(l -> l.forEach(ManagedChannel::shutdownNow));
    for (NodeProcess n : nodes) {
      n.retire();
    }
    try {
      for (NodeProcess n : nodes) {
        Files.deleteIfExists(dir.resolve("pids").resolve(n.id() + ".pid"));
      }
      Files.writeString(dir.resolve("closed"), "closed\n");
    } catch (IOException e) {
      LOG.warn("cleaning up the pid files: {}", e.toString());
    }
    network.close();
    if (watchdog != null) {
      watchdog.destroy();
    }
    if (Thread.currentThread() != hook) {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // already running the hooks
      }
    }
  }
}
