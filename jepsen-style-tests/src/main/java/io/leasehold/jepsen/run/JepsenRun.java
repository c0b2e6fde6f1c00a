package io.leasehold.jepsen.run;

import com.google.protobuf.Duration;
import io.leasehold.jepsen.checker.Checker;
import io.leasehold.jepsen.checker.Verdict;
import io.leasehold.jepsen.cluster.Certificates;
import io.leasehold.jepsen.cluster.Cluster;
import io.leasehold.jepsen.cluster.NodeProcess;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.LivenessProbe;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.jepsen.nemesis.ClientDelayNemesis;
import io.leasehold.jepsen.nemesis.ClientFaults;
import io.leasehold.jepsen.nemesis.ClockNemesis;
import io.leasehold.jepsen.nemesis.GroupMembersNemesis;
import io.leasehold.jepsen.nemesis.KillNemesis;
import io.leasehold.jepsen.nemesis.LeaderChurnNemesis;
import io.leasehold.jepsen.nemesis.MembershipNemesis;
import io.leasehold.jepsen.nemesis.Nemesis;
import io.leasehold.jepsen.nemesis.NemesisContext;
import io.leasehold.jepsen.nemesis.PartitionNemesis;
import io.leasehold.jepsen.nemesis.PauseNemesis;
import io.leasehold.jepsen.nemesis.PeerDelayNemesis;
import io.leasehold.jepsen.nemesis.Schedule;
import io.leasehold.jepsen.nemesis.Timeline;
import io.leasehold.jepsen.workload.BulkLockWorkload;
import io.leasehold.jepsen.workload.DeadlineRenewalWorkload;
import io.leasehold.jepsen.workload.ElectionWorkload;
import io.leasehold.jepsen.workload.FencedLockWorkload;
import io.leasehold.jepsen.workload.HandoffWorkload;
import io.leasehold.jepsen.workload.LockOpsWorkload;
import io.leasehold.jepsen.workload.NamespaceMoveWorkload;
import io.leasehold.jepsen.workload.PartitionWorkload;
import io.leasehold.jepsen.workload.PolicyWorkload;
import io.leasehold.jepsen.workload.RegistryWorkload;
import io.leasehold.jepsen.workload.SessionLockWorkload;
import io.leasehold.jepsen.workload.WatchWorkload;
import io.leasehold.jepsen.workload.Workload;
import io.leasehold.jepsen.workload.WorkloadContext;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.GroupStatus;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One fault-test run: starts the cluster, the workloads and the nemesis schedule; heals everything;
 * probes liveness; restarts every node; reads the final state; runs every checker; writes the
 * report. The cluster is always torn down.
 */
public final class JepsenRun {
  /**
   * The servers' options beyond the cluster's own: the lease groups, and with moves, parts of 1 KiB
   * (a test-only bound), so that every move of a namespace with more state than that stages it in
   * parts in its destination before the adoption, as a namespace too large for one entry does.
   */
  static List<String> serverArgs(Config config) {
    if (config.leaseGroups() <= 1) {
      return List.of();
    }
    List<String> args =
        new java.util.ArrayList<>(
            List.of("--lease-groups", Integer.toString(config.leaseGroups())));
    if (config.moves()) {
      args.addAll(List.of("--move-part-bytes", Integer.toString(MOVE_PART_BYTES)));
    }
    if (config.leaseGroupSize() > 0) {
      args.addAll(List.of("--lease-group-size", Integer.toString(config.leaseGroupSize())));
    }
    return List.copyOf(args);
  }

  /** The parts moves stage in the fault schedule with moves. */
  static final int MOVE_PART_BYTES = 1024;

  private static final Logger LOG = LoggerFactory.getLogger(JepsenRun.class);

  /**
   * @param schedule builds the schedule from every nemesis (supported or not)
   * @param livenessBound a free name must be granted this soon after the last heal
   * @param tls the certificates of a run with mutual TLS on every port and client certificates
   *     required; every client identity presents its own
   * @param leaseGroups the server's {@code --lease-groups}: above 1, the workloads' namespaces are
   *     placed on lease groups (docs/design/multi-raft.md), and the watch workload's watches follow
   *     the lease group of the namespace they watch
   * @param moves with lease groups: namespaces also move between them throughout the schedule
   *     ({@link NamespaceMoveWorkload})
   * @param leaseGroupSize the server's {@code --lease-group-size}: above 0, each lease group sits
   *     on that many of the nodes, and the others serve it through its members
   */
  public record Config(
      String name,
      int nodes,
      Path jar,
      Path reports,
      long seed,
      Function<List<Nemesis>, Schedule> schedule,
      java.time.Duration livenessBound,
      int lockNames,
      Optional<Certificates> tls,
      int leaseGroups,
      boolean moves,
      int leaseGroupSize) {
    /** A run whose lease groups sit on every node. */
    public Config(
        String name,
        int nodes,
        Path jar,
        Path reports,
        long seed,
        Function<List<Nemesis>, Schedule> schedule,
        java.time.Duration livenessBound,
        int lockNames,
        Optional<Certificates> tls,
        int leaseGroups,
        boolean moves) {
      this(
          name,
          nodes,
          jar,
          reports,
          seed,
          schedule,
          livenessBound,
          lockNames,
          tls,
          leaseGroups,
          moves,
          0);
    }

    /** A run whose namespaces stay where their first grants place them. */
    public Config(
        String name,
        int nodes,
        Path jar,
        Path reports,
        long seed,
        Function<List<Nemesis>, Schedule> schedule,
        java.time.Duration livenessBound,
        int lockNames,
        Optional<Certificates> tls,
        int leaseGroups) {
      this(
          name,
          nodes,
          jar,
          reports,
          seed,
          schedule,
          livenessBound,
          lockNames,
          tls,
          leaseGroups,
          false);
    }

    /** A run with one Raft group. */
    public Config(
        String name,
        int nodes,
        Path jar,
        Path reports,
        long seed,
        Function<List<Nemesis>, Schedule> schedule,
        java.time.Duration livenessBound,
        int lockNames,
        Optional<Certificates> tls) {
      this(name, nodes, jar, reports, seed, schedule, livenessBound, lockNames, tls, 1);
    }

    /** A plaintext run. */
    public Config(
        String name,
        int nodes,
        Path jar,
        Path reports,
        long seed,
        Function<List<Nemesis>, Schedule> schedule,
        java.time.Duration livenessBound,
        int lockNames) {
      this(name, nodes, jar, reports, seed, schedule, livenessBound, lockNames, Optional.empty());
    }
  }

  /**
   * @param nemeses the nemeses of the run's schedule (those this machine cannot run included)
   */
  public record Result(
      Path reportDir,
      Path report,
      History history,
      List<Verdict> verdicts,
      Map<String, Integer> faults,
      Map<String, String> skipped,
      List<Nemesis> nemeses) {
    public boolean valid() {
      return verdicts.stream().noneMatch(Verdict::failed);
    }
  }

  private JepsenRun() {}

  /** Every nemesis, as this cluster supports it: fault durations are chosen by the schedule. */
  public static List<Nemesis> nemeses(Cluster cluster) {
    return nemeses(cluster, 0);
  }

  /**
   * As {@link #nemeses(Cluster)}, on nodes whose lease groups sit on {@code leaseGroupSize} of them
   * (0: on every node).
   */
  /**
   * Whether, as the cluster forms, some node is a member of every lease group: always without a
   * group size; with one, group k sits on the {@code size} nodes from position (k - 1) × size on,
   * wrapping (the server's formation).
   */
  static boolean someNodeHostsEveryGroup(int nodes, int groups, int size) {
    if (size == 0) {
      return true;
    }
    for (int node = 0; node < nodes; node++) {
      boolean all = true;
      for (int k = 1; k <= groups && all; k++) {
        int offset = Math.floorMod(node - (k - 1) * size, nodes);
        all = offset < size;
      }
      if (all) {
        return true;
      }
    }
    return false;
  }

  static List<Nemesis> nemeses(Cluster cluster, int leaseGroupSize) {
    var noPartition = cluster.network().partitionUnsupportedReason();
    var noClock =
        cluster.faketime().isPresent()
            ? Optional.<String>empty()
            : Optional.of(cluster.faketimeSkipReason());
    return List.of(
        new KillNemesis(true),
        new KillNemesis(false),
        new PauseNemesis(true),
        new PauseNemesis(false),
        new PartitionNemesis(PartitionNemesis.Mode.ISOLATE_LEADER, noPartition),
        new PartitionNemesis(PartitionNemesis.Mode.MAJORITY_MINORITY, noPartition),
        new PartitionNemesis(PartitionNemesis.Mode.BRIDGE, noPartition),
        new ClockNemesis(noClock),
        new LeaderChurnNemesis(java.time.Duration.ofSeconds(3)),
        new ClientDelayNemesis(2500),
        new MembershipNemesis(
            leaseGroupSize > 0
                ? Optional.of(
                    "every node is a member of a lease group, and leaves the cluster only once it"
                        + " is out of each; the group-members nemesis changes the lease groups'"
                        + " members instead")
                : Optional.empty()),
        new GroupMembersNemesis(
            leaseGroupSize > 0
                ? Optional.empty()
                : Optional.of(
                    "every lease group sits on every node: their members follow the cluster's")),
        new PeerDelayNemesis());
  }

  public static Result run(Config config) throws IOException {
    long started = System.nanoTime();
    Path dir =
        config
            .reports()
            .resolve(
                config.name()
                    + "-"
                    + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    Files.createDirectories(dir);
    Recorder rec = new Recorder();
    Timeline timeline = new Timeline();
    ClientFaults clientFaults = new ClientFaults();
    Cluster cluster = null;
    List<Nemesis> nemeses = List.of();
    List<Nemesis> scheduled = List.of();
    StringBuilder setup = new StringBuilder();
    String stoppedEarly = null;
    try {
      try {
        cluster =
            Cluster.start(config.nodes(), config.jar(), dir, config.tls(), serverArgs(config));
        if (config.moves()) {
          setup
              .append("- moves stage a namespace's state in parts of at most ")
              .append(MOVE_PART_BYTES)
              .append(" bytes\n");
        }
        setup
            .append("- nodes: ")
            .append(config.nodes())
            .append(" processes of ")
            .append(config.jar().getFileName())
            .append(" on ")
            .append(cluster.network())
            .append('\n')
            .append("- transport: ")
            .append(cluster.transport())
            .append('\n')
            .append("- clocks: ")
            .append(
                cluster
                    .faketime()
                    .map(f -> "libfaketime " + f)
                    .orElse("not fakeable: " + cluster.faketimeSkipReason()))
            .append('\n')
            .append("- seed: ")
            .append(config.seed())
            .append('\n');
        nemeses = nemeses(cluster, config.leaseGroupSize());
        Schedule schedule = config.schedule().apply(nemeses);
        scheduled = schedule.steps().stream().map(Schedule.Step::nemesis).distinct().toList();
        drive(config, cluster, nemeses, schedule, rec, timeline, clientFaults, setup);
      } catch (RuntimeException e) {
        LOG.error("run {} stopped early", config.name(), e);
        stoppedEarly = e.toString();
        setup.append("- **the run stopped early**: ").append(e).append('\n');
      }
      History h = rec.snapshot();
      List<Verdict> verdicts = new ArrayList<>();
      for (Checker c :
          config.leaseGroups() > 1
              ? (config.moves() ? Checker.withMoves() : Checker.withLeaseGroups())
              : Checker.all()) {
        verdicts.add(c.check(h));
      }
      verdicts.forEach(v -> LOG.info("verdict {}", v));
      Path report =
          Report.write(
              dir,
              "Leasehold fault test " + config.name(),
              setup.toString(),
              cluster,
              h,
              timeline,
              verdicts,
              (System.nanoTime() - started) / 1_000_000);
      LOG.info("report: {}", report.toAbsolutePath());
      if (stoppedEarly != null) {
        throw new IllegalStateException(
            "the run stopped early (" + stoppedEarly + "); report " + report.toAbsolutePath());
      }
      return new Result(
          dir, report, h, verdicts, timeline.faults(), timeline.skippedNemeses(), scheduled);
    } finally {
      if (cluster != null) {
        cluster.close();
        deleteTree(dir.resolve("data"));
      }
    }
  }

  private static void drive(
      Config config,
      Cluster cluster,
      List<Nemesis> nemeses,
      Schedule schedule,
      Recorder rec,
      Timeline timeline,
      ClientFaults clientFaults,
      StringBuilder setup) {
    // Generous: three JVMs starting at once on a loaded two-core machine can take minutes.
    cluster.awaitLeader(java.time.Duration.ofSeconds(300));
    cluster.awaitAllUp(java.time.Duration.ofSeconds(300));
    setUpPolicies(cluster);
    boolean grouped = config.leaseGroups() > 1;
    if (grouped) {
      awaitLeaseGroups(cluster, config.leaseGroups());
      setup.append("- lease groups: ").append(config.leaseGroups()).append('\n');
      if (config.leaseGroupSize() > 0) {
        setup
            .append("- each lease group on ")
            .append(config.leaseGroupSize())
            .append(" of the ")
            .append(config.nodes())
            .append(" nodes\n");
      }
    }
    NemesisContext nctx = new NemesisContext(cluster, new Random(config.seed()), clientFaults);
    WorkloadContext wctx = new WorkloadContext(cluster, rec, clientFaults);
    // With moves, lock moves too: its watchers list again when a move ends their watch.
    WatchWorkload watch =
        new WatchWorkload(
            grouped,
            grouped && config.moves(),
            someNodeHostsEveryGroup(config.nodes(), config.leaseGroups(), config.leaseGroupSize()));
    List<Workload> workloads =
        new ArrayList<>(
            List.of(
                new LockOpsWorkload(3, config.lockNames()),
                new FencedLockWorkload(4, 2),
                new BulkLockWorkload(3, 8),
                new RegistryWorkload(2, 2),
                new PolicyWorkload(),
                new DeadlineRenewalWorkload(4),
                new SessionLockWorkload(3, 3),
                new HandoffWorkload(3, 2),
                new ElectionWorkload(3),
                new PartitionWorkload(3)));
    if (grouped && config.moves()) {
      workloads.add(new NamespaceMoveWorkload(config.leaseGroups()));
      setup.append("- namespaces moving: ").append(NamespaceMoveWorkload.NAMESPACES).append('\n');
    }
    watch.start(wctx);
    workloads.forEach(w -> w.start(wctx));
    try {
      Pacing.sleep(java.time.Duration.ofSeconds(3));
      LOG.info("schedule: {} steps", schedule.steps().size());
      schedule.run(nctx, nemeses, timeline, () -> false);
    } finally {
      healEverything(nctx, nemeses);
    }
    // The heal is complete once restarted processes are up again (minutes, on a starved machine):
    // the bound runs from there.
    try {
      cluster.awaitAllUp(java.time.Duration.ofSeconds(300));
    } catch (IllegalStateException notWhole) {
      LOG.warn("the cluster is not whole 300 s after the last heal; probing liveness anyway");
    }
    long healed = System.nanoTime();
    rec.liveness(
        probeLiveness(cluster, healed, config.livenessBound(), "lock/liveness-" + config.seed()));
    workloads.forEach(Workload::stop);
    awaitWatchers(cluster, watch);
    watch.stop();
    if (grouped) {
      setup.append("- namespaces placed: ").append(placedOnLeaseGroups(cluster)).append('\n');
    }
    restartAll(cluster);
    rec.finalState(new FinalReader(cluster).read(rec.snapshot()));
  }

  private static void setUpPolicies(Cluster cluster) {
    // Keep every ended lease of the test names, for the durability checker.
    for (String ns : List.of("lock", "service")) {
      SetPolicyRequest r =
          SetPolicyRequest.newBuilder()
              .setNamespace(ns)
              .setPolicy(Policy.newBuilder().setHistoryLimit(10_000))
              .build();
      cluster.awaitCondition(
          "policy for " + ns + " set",
          java.time.Duration.ofSeconds(60),
          () -> {
            try {
              AdminGrpc.newBlockingStub(cluster.channel(cluster.leader().orElse(0)))
                  .withDeadlineAfter(3, TimeUnit.SECONDS)
                  .setPolicy(r);
              return true;
            } catch (RuntimeException e) {
              return false;
            }
          });
    }
  }

  private static void healEverything(NemesisContext ctx, List<Nemesis> nemeses) {
    for (Nemesis n : nemeses) {
      if (n.unsupportedReason().isEmpty()) {
        try {
          n.heal(ctx);
        } catch (RuntimeException e) {
          LOG.warn("final heal of {}: {}", n.name(), e.toString());
        }
      }
    }
    ctx.cluster().network().heal();
    ctx.clientFaults().heal();
    for (NodeProcess node : ctx.cluster().nodes()) {
      node.resume();
      node.start();
      node.setClockOffset(0);
    }
  }

  /** Acquires a fresh name, trying node after node, until granted or well past the bound. */
  private static LivenessProbe probeLiveness(
      Cluster cluster, long healed, java.time.Duration bound, String name) {
    long giveUp = healed + bound.toNanos() * 3;
    int node = 0;
    String holder = "liveness";
    while (System.nanoTime() - giveUp < 0) {
      try {
        AcquireResponse r =
            LeasesGrpc.newBlockingStub(cluster.channel(node % cluster.size(), holder))
                .withDeadlineAfter(2, TimeUnit.SECONDS)
                .acquire(
                    AcquireRequest.newBuilder()
                        .setName(name)
                        .setHolder(holder)
                        .setTtl(Duration.newBuilder().setSeconds(60))
                        .build());
        if (r.getOutcome() == Outcome.GRANTED) {
          return new LivenessProbe(
              name, healed, OptionalLong.of(System.nanoTime()), bound.toNanos());
        }
      } catch (RuntimeException e) {
        node++;
      }
      Pacing.sleep(java.time.Duration.ofMillis(100));
    }
    return new LivenessProbe(name, healed, OptionalLong.empty(), bound.toNanos());
  }

  /**
   * Waits until every lease group has a leader and holds the meta group's global state (which it
   * takes once the meta group applies log format 6): from then on a namespace's first write places
   * it on a lease group rather than leaving it in the meta group.
   */
  private static void awaitLeaseGroups(Cluster cluster, int leaseGroups) {
    cluster.awaitCondition(
        "every lease group led and holding the global state",
        java.time.Duration.ofSeconds(300),
        () -> {
          // Each group as one of its members reports it: a node reports the groups it hosts.
          Set<Integer> ready = new java.util.HashSet<>();
          for (StatusResponse s : statuses(cluster)) {
            for (GroupStatus g : s.getGroupsList()) {
              if (!g.getLeaderId().isEmpty() && (g.getNumber() == 0 || g.getGlobalVersion() > 0)) {
                ready.add(g.getNumber());
              }
            }
          }
          return ready.size() == leaseGroups + 1;
        });
  }

  /** The status of every node that answers within a few seconds. */
  private static List<StatusResponse> statuses(Cluster cluster) {
    List<StatusResponse> all = new java.util.ArrayList<>();
    for (int i = 0; i < cluster.size(); i++) {
      try {
        all.add(
            ClusterGrpc.newBlockingStub(cluster.channel(i))
                .withDeadlineAfter(3, TimeUnit.SECONDS)
                .status(StatusRequest.getDefaultInstance()));
      } catch (RuntimeException e) {
        // Down or cut off: the others tell.
      }
    }
    return all;
  }

  /**
   * The namespaces on each lease group, as a node reports them; a run whose workloads left every
   * namespace in the meta group tested nothing of the lease groups, and stops.
   */
  private static String placedOnLeaseGroups(Cluster cluster) {
    java.util.concurrent.atomic.AtomicReference<List<StatusResponse>> status =
        new java.util.concurrent.atomic.AtomicReference<>();
    cluster.awaitCondition(
        "a node's status",
        java.time.Duration.ofSeconds(60),
        () -> {
          status.set(statuses(cluster));
          return !status.get().isEmpty();
        });
    // Each node reports the groups it hosts (all of them, unless groups sit on subsets).
    Map<Integer, List<String>> placed = new java.util.TreeMap<>();
    for (StatusResponse s : status.get()) {
      for (GroupStatus g : s.getGroupsList()) {
        if (g.getNumber() > 0 && g.getNamespacesCount() > 0) {
          placed.putIfAbsent(g.getNumber(), g.getNamespacesList());
        }
      }
    }
    if (placed.isEmpty()) {
      throw new IllegalStateException(
          "no namespace was placed on a lease group: the run exercised the meta group alone");
    }
    return placed.toString();
  }

  private static void awaitWatchers(Cluster cluster, WatchWorkload watch) {
    long target = watch.highestRevision();
    try {
      cluster.awaitCondition(
          "every watcher reaches revision " + target,
          java.time.Duration.ofSeconds(60),
          () -> watch.lowestRevision() >= target);
    } catch (IllegalStateException e) {
      LOG.warn("watchers did not all catch up: lowest {} of {}", watch.lowestRevision(), target);
    }
  }

  /**
   * kill -9 every node and start them again from their data dirs: what was acknowledged must still
   * be there.
   */
  private static void restartAll(Cluster cluster) {
    cluster.nodes().forEach(NodeProcess::kill);
    cluster.nodes().forEach(NodeProcess::start);
    cluster.awaitLeader(java.time.Duration.ofSeconds(300));
    cluster.awaitAllUp(java.time.Duration.ofSeconds(300));
  }

  private static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      LOG.warn("could not delete {}: {}", root, e.toString());
    }
  }
}
