package io.leasehold.benchmarks.watch;

import io.grpc.ManagedChannel;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.Peer;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The latency run's three nodes, one JVM each ({@code --nodes=process}), as a deployment runs them:
 * each child runs one {@link LeaseholdNode} on its loopback ports, with this JVM's flags (the
 * collector's among them), and this JVM keeps only the clients, the load and the watchers.
 *
 * <p>In one JVM, every collector pause stops all three nodes and the clients at once, and each
 * pause copies three nodes' worth of survivors. Apart, each node's collector copies its own, and a
 * pause on one follower does not hold up a commit (the other follower acknowledges it). But a pause
 * no longer stops the other JVMs, so on two cores a node's collector shares them with three other
 * processes: in one set of runs the followers' young pauses took three times as long as in one JVM,
 * and the latencies were worse (docs/performance.md).
 *
 * <p>The parent drives each child as a {@link ChildJvm} ({@link #main} lists the commands). A
 * child's log (its standard error) goes to {@code <id>.log} in the cluster's temp directory,
 * deleted with it.
 */
final class NodeProcesses implements LatencyCluster {
  private final List<Child> children = new ArrayList<>();
  private final ClusterHome home =
      new ClusterHome("bench-node-processes-cleanup", () -> children.forEach(Child::close));
  private CompletableFuture<Void> marked = CompletableFuture.completedFuture(null);

  private NodeProcesses() throws IOException {}

  static NodeProcesses start(
      int size, Duration electionMin, Duration electionMax, NodeTuning tuning) throws IOException {
    NodeProcesses cluster = new NodeProcesses();
    try {
      List<Peer> peers = BenchCluster.loopbackPeers(size);
      StringBuilder peerList = new StringBuilder();
      for (Peer p : peers) {
        peerList
            .append(peerList.length() == 0 ? "" : ",")
            .append(p.id())
            .append('=')
            .append(p.host())
            .append(':')
            .append(p.peerPort())
            .append(':')
            .append(p.clientPort());
      }
      for (Peer p : peers) {
        List<String> command = new ArrayList<>(childJvm());
        command.addAll(
            List.of(
                NodeProcesses.class.getName(),
                p.id(),
                peerList.toString(),
                cluster.baseDir().resolve(p.id()).toString(),
                Long.toString(electionMin.toMillis()),
                Long.toString(electionMax.toMillis())));
        command.addAll(tuning.args());
        Path log = cluster.baseDir().resolve(p.id() + ".log");
        Process process =
            new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        cluster.children.add(new Child(p, process, log));
      }
      for (Child c : cluster.children) {
        c.expect("ready");
      }
      cluster.awaitReadyLeader(Duration.ofSeconds(60));
      return cluster;
    } catch (IOException | RuntimeException | Error e) {
      cluster.close();
      throw e;
    }
  }

  /**
   * This JVM's command line for a child, less what must not be doubled: agents, debuggers, flight
   * recordings and log files of this process. The collector's flags and {@code -D} properties are
   * kept, so a child runs as this JVM does.
   */
  private static List<String> childJvm() {
    List<String> command = new ArrayList<>(List.of(ChildJvm.java()));
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!(arg.startsWith("-agent")
          || arg.startsWith("-javaagent")
          || arg.startsWith("-Xlog")
          || arg.startsWith("-Xrun")
          || arg.startsWith("-XX:StartFlightRecording")
          || arg.startsWith("-XX:FlightRecorderOptions"))) {
        command.add(arg);
      }
    }
    for (String property :
        List.of(
            "org.slf4j.simpleLogger.defaultLogLevel",
            "java.util.concurrent.ForkJoinPool.common.parallelism")) {
      String value = System.getProperty(property);
      if (value != null && command.stream().noneMatch(a -> a.startsWith("-D" + property + "="))) {
        command.add("-D" + property + "=" + value);
      }
    }
    command.addAll(List.of("-cp", System.getProperty("java.class.path")));
    return command;
  }

  Path baseDir() {
    return home.dir();
  }

  List<Long> pids() {
    return children.stream().map(Child::pid).toList();
  }

  @Override
  public String where() {
    return "one JVM per node";
  }

  @Override
  public List<? extends Node> nodes() {
    return children;
  }

  @Override
  public Node awaitReadyLeader(Duration timeout) {
    BenchCluster.await(
        "a ready leader", timeout, () -> children.stream().anyMatch(Child::isReadyLeader));
    return children.stream().filter(Child::isReadyLeader).findFirst().orElseThrow();
  }

  @Override
  public Optional<? extends Node> leader() {
    return children.stream().filter(Child::isLeader).findFirst();
  }

  @Override
  public ManagedChannel channel(Node node, boolean acceptLz4) {
    return home.clients().channel(node.clientAddress(), acceptLz4);
  }

  @Override
  public ManagedChannel writerChannel(Node node, boolean shareWatchersLoop) {
    return home.clients().writerChannel(node.clientAddress(), shareWatchersLoop);
  }

  /**
   * Off the caller's thread: the load's pacing loop calls it, and each child reads its threads' CPU
   * from /proc.
   */
  @Override
  public synchronized void markPeriod() {
    marked =
        CompletableFuture.allOf(
            children.stream()
                .map(c -> CompletableFuture.runAsync(() -> c.ask("mark", "marked")))
                .toArray(CompletableFuture[]::new));
  }

  @Override
  public synchronized PeriodReport periodReport(int topThreads) {
    marked.join();
    List<String> lines = new ArrayList<>();
    double jit = 0;
    double cores = 0;
    for (Child c : children) {
      String[] a = c.ask("report " + topThreads, "report");
      jit += Double.parseDouble(a[1]);
      cores += Double.parseDouble(a[2]);
      lines.add("node " + c.id() + "'s process:");
      for (String l :
          new String(Base64.getDecoder().decode(a[3]), StandardCharsets.UTF_8).split("\n")) {
        lines.add("  " + l);
      }
    }
    return new PeriodReport(lines, jit, cores);
  }

  @Override
  public void close() {
    home.close();
  }

  /** The parent's handle on one child. */
  private static final class Child implements Node {
    private final Peer peer;
    private final ChildJvm process;
    private final Path log;

    Child(Peer peer, Process process, Path log) {
      this.peer = peer;
      this.process = new ChildJvm(peer.id() + "'s process", process, log);
      this.log = log;
    }

    @Override
    public String id() {
      return peer.id();
    }

    @Override
    public String clientAddress() {
      return peer.host() + ":" + peer.clientPort();
    }

    /** {@code status leader ready applied commit snapshot}. */
    private String[] status() {
      return ask("status", "status");
    }

    @Override
    public boolean isLeader() {
      return Boolean.parseBoolean(status()[1]);
    }

    @Override
    public boolean isReadyLeader() {
      return Boolean.parseBoolean(status()[2]);
    }

    @Override
    public long appliedIndex() {
      return Long.parseLong(status()[3]);
    }

    @Override
    public long commitIndex() {
      return Long.parseLong(status()[4]);
    }

    @Override
    public long latestSnapshotIndex() {
      return Long.parseLong(status()[5]);
    }

    /** The child logs when the snapshot ends; {@code done} hears only that it was asked for. */
    @Override
    public void startSnapshot(Consumer<String> done) {
      ask("snapshot", "snapshotting");
      done.accept("snapshot asked of " + id() + "'s process");
    }

    @Override
    public void recordCommits(long base, int length) {
      ask("record " + base + " " + length, "recording");
    }

    @Override
    public CommitTimes commitTimes() {
      Path file = log.resolveSibling(id() + ".commits");
      ask("commits " + file, "commits");
      try {
        return CommitTimes.readFrom(file);
      } catch (IOException e) {
        throw new UncheckedIOException("reading " + id() + "'s commit times", e);
      }
    }

    @Override
    public Optional<LeaseholdNode> inThisJvm() {
      return Optional.empty();
    }

    String[] ask(String command, String answer) {
      return process.ask(command, answer);
    }

    String[] expect(String answer) {
      return process.expect(answer);
    }

    long pid() {
      return process.pid();
    }

    /** The child closes its node and exits when its input ends. */
    void close() {
      process.close(Duration.ofSeconds(30));
    }
  }

  /**
   * The child: {@code NodeProcesses ID PEERS DATA_DIR ELECTION_MIN_MS ELECTION_MAX_MS
   * WATCH_SENDERS}, PEERS as {@code id=host:peerPort:clientPort,…}. It starts the node, says {@code
   * ready}, then answers, one line each:
   *
   * <ul>
   *   <li>{@code status} → {@code status LEADER READY_LEADER APPLIED COMMIT SNAPSHOT};
   *   <li>{@code record BASE LENGTH} → {@code recording}: note commit times from now on ({@link
   *       CommitTimes});
   *   <li>{@code commits FILE} → {@code commits REPORTED}: stop, and write them to FILE;
   *   <li>{@code snapshot} → {@code snapshotting}: start one (its end goes to the log);
   *   <li>{@code mark} → {@code marked}; {@code report TOP} → {@code report JIT_CORES CORES
   *       BASE64(LINES)}: this process's CPU (as {@link CpuProfile} gives it) and GC pauses since
   *       the mark;
   *   <li>a failed command → {@code error MESSAGE}.
   * </ul>
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 8) {
      System.err.println(
          "usage: NodeProcesses ID PEERS DATA_DIR ELECTION_MIN_MS ELECTION_MAX_MS WATCH_SENDERS WATCH_MESSAGE_RATE "
              + "WATCH_MAX_DELAY_MS (0: the server's default)");
      System.exit(64);
    }
    // The answers own standard output; anything else printed there goes to the log instead.
    PrintStream answers =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err);
    List<Peer> peers = new ArrayList<>();
    for (String spec : args[1].split(",")) {
      String[] idAddress = spec.split("=", 2);
      String[] hostPorts = idAddress[1].split(":");
      peers.add(
          new Peer(
              idAddress[0],
              hostPorts[0],
              Integer.parseInt(hostPorts[1]),
              Integer.parseInt(hostPorts[2])));
    }
    NodeConfig.Builder config =
        NodeConfig.builder()
            .id(args[0])
            .peers(peers)
            .dataDir(Path.of(args[2]))
            .electionTimeout(
                Duration.ofMillis(Long.parseLong(args[3])),
                Duration.ofMillis(Long.parseLong(args[4])));
    NodeTuning.parse(args[5], args[6], args[7]).applyTo(config);
    GcPauses.listen();
    LeaseholdNode leaseholdNode = LeaseholdNode.start(config.build());
    InJvmNode node = new InJvmNode(leaseholdNode);
    answers.println("ready");
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    CpuProfile cpuMark = CpuProfile.take();
    int gcMark = GcPauses.mark();
    String line;
    while ((line = in.readLine()) != null) {
      String[] a = line.split(" ");
      try {
        switch (a[0]) {
          case "status" ->
              answers.println(
                  String.join(
                      " ",
                      "status",
                      Boolean.toString(node.isLeader()),
                      Boolean.toString(node.isReadyLeader()),
                      Long.toString(node.appliedIndex()),
                      Long.toString(node.commitIndex()),
                      Long.toString(node.latestSnapshotIndex())));
          case "record" -> {
            node.recordCommits(Long.parseLong(a[1]), Integer.parseInt(a[2]));
            answers.println("recording");
          }
          case "commits" -> {
            CommitTimes times = node.commitTimes();
            times.writeTo(Path.of(a[1]));
            answers.println("commits " + times.reported());
          }
          case "snapshot" -> {
            long asked = System.nanoTime();
            node.startSnapshot(
                done ->
                    System.err.printf(
                        Locale.ROOT,
                        "%s, %.1f s after it was asked for%n",
                        done,
                        (System.nanoTime() - asked) / 1e9));
            answers.println("snapshotting");
          }
          case "mark" -> {
            cpuMark = CpuProfile.take();
            gcMark = GcPauses.mark();
            answers.println("marked");
          }
          case "report" -> {
            CpuProfile now = CpuProfile.take();
            List<String> lines = new ArrayList<>(now.since(cpuMark, Integer.parseInt(a[1])));
            lines.add(GcPauses.since(gcMark, now.wallSecondsSince(cpuMark)));
            answers.println(
                String.join(
                    " ",
                    "report",
                    Double.toString(now.jitCoresSince(cpuMark)),
                    Double.toString(now.processCoresSince(cpuMark)),
                    Base64.getEncoder()
                        .encodeToString(
                            String.join("\n", lines).getBytes(StandardCharsets.UTF_8))));
          }
          default -> answers.println("error unknown command '" + a[0] + "'");
        }
      } catch (IOException | RuntimeException e) {
        answers.println("error " + String.valueOf(e).replace('\n', ' '));
      }
    }
    leaseholdNode.close();
    System.exit(0);
  }
}
