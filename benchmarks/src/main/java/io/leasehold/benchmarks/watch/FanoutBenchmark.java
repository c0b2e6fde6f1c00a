package io.leasehold.benchmarks.watch;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.EventView;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.TakeSnapshotRequest;
import io.leasehold.proto.v1.TakeSnapshotResponse;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.statemachine.store.RocksDbStore;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Fan-out: closed-loop Acquire throughput through the leader with no watchers, then for each event
 * view N watchers on the leader (prefix bench/, from now on) followed by no watchers again: each
 * watched phase is compared with the no-watcher phases either side of it, so drift shows. After a
 * watched phase's load stops, waits (up to the drain timeout) until every watcher has seen every
 * acquisition of the phase, and reports how many did.
 */
final class FanoutBenchmark {
  record Phase(
      String name,
      int watchers,
      double throughput,
      long granted,
      long notGranted,
      long errors,
      Histogram latency,
      int watchersComplete,
      int watchersOver,
      int watchersFailed,
      double drainMs,
      boolean drained,
      double jitCores,
      double markingCores,
      Cpu cpu) {
    /**
     * Whether G1's concurrent marking ran in the phase. Leases live for the whole run, so the old
     * generation fills and G1 marks it now and then, for 5–7 s at about half a core: the 5 s phase
     * it falls in loses about a third of its throughput, watched or not (docs/performance.md).
     */
    boolean marked() {
      return markingCores > MARKING_CORES;
    }
  }

  /**
   * Where a phase's CPU went, in cores: the benchmark's whole process, the acquire load's own
   * client event loop, and the watchers' client side (their event loops when they run in this JVM,
   * else their process). NaN where not known (the load sharing the watchers' loops).
   */
  record Cpu(double process, double writer, double watcherClients, boolean clientsInProcess) {
    static final Cpu UNKNOWN = new Cpu(Double.NaN, Double.NaN, Double.NaN, true);

    /** The three nodes' cores: the process less the load's and the watchers' client loops. */
    double cluster() {
      return process - writer - (clientsInProcess ? watcherClients : 0);
    }
  }

  /** Above this, a phase counts as one G1's concurrent marking ran in ({@link Phase#marked}). */
  static final double MARKING_CORES = 0.05;

  /** One view's watched phase against the no-watcher phases before and after it. */
  record Comparison(EventView view, Phase before, Phase watched, Phase after, int watchers) {
    double baseline() {
      return (before.throughput() + after.throughput()) / 2;
    }

    double ratio() {
      return watched.throughput() / baseline();
    }

    /** Whether G1's concurrent marking ran in one of its three phases. */
    boolean marked() {
      return before.marked() || watched.marked() || after.marked();
    }

    boolean everyWatcherSawEverything() {
      return watched.watchersComplete() == watchers
          && watched.watchersOver() == 0
          && watched.watchersFailed() == 0;
    }

    /**
     * The cluster's CPU per acquisition without watchers, in µs: the mean of the two neighbours'.
     */
    double acquisitionMicros() {
      return (clusterMicros(before) + clusterMicros(after)) / 2;
    }

    /**
     * What the watchers add to the cluster's CPU per event (each acquisition is one event to each
     * watcher), in µs: the watched phase's cluster CPU per acquisition less {@link
     * #acquisitionMicros}. A difference of noisy figures: a single phase's may even come out below
     * zero.
     */
    double watcherServerMicros() {
      return clusterMicros(watched) - acquisitionMicros();
    }

    /**
     * The watchers' own client CPU per event, in µs (theirs, not the cluster's: a deployment runs
     * them elsewhere).
     */
    double watcherClientMicros() {
      return watched.cpu().watcherClients() / watched.throughput() * 1e6;
    }

    private static double clusterMicros(Phase p) {
      return p.cpu().cluster() / p.throughput() * 1e6;
    }
  }

  /**
   * Phases: no watchers, then per view (in {@code views} order) watched and no watchers. {@code
   * clientsOwnCores}: the watchers' clients ran on cores the cluster could not use ({@link
   * CpuSplit}).
   */
  record Result(
      List<Phase> phases,
      List<EventView> views,
      int watchers,
      String watchersWhere,
      boolean leaderUnchanged,
      boolean clientsOwnCores) {
    List<Comparison> comparisons() {
      List<Comparison> c = new ArrayList<>();
      for (int k = 0; k < views.size(); k++) {
        c.add(
            new Comparison(
                views.get(k),
                phases.get(2 * k),
                phases.get(2 * k + 1),
                phases.get(2 * k + 2),
                watchers));
      }
      return c;
    }

    /** The most the JIT compilers used in one of the measured phases. */
    double jitCores() {
      return phases.stream().mapToDouble(Phase::jitCores).max().orElse(0);
    }
  }

  private final BenchCluster cluster;
  private final Options options;
  private final PrintStream out;
  private final PhaseProfiler profiler;
  private final Map<LeaseholdNode, ManagedChannel> adminChannels = new HashMap<>();

  /** This run's watchers, on the leader (set by {@link #run}). */
  private WatcherFleet fleet;

  /**
   * With {@code --watchers-in=capped-process}: the control groups that hold the two processes to
   * their cores.
   */
  private CpuSplit split;

  FanoutBenchmark(BenchCluster cluster, Options options, PrintStream out, PhaseProfiler profiler) {
    this.cluster = cluster;
    this.options = options;
    this.out = out;
    this.profiler = profiler;
  }

  Result run() throws InterruptedException {
    LeaseholdNode leader = cluster.awaitReadyLeader(Duration.ofSeconds(30));
    out.printf(
        Locale.ROOT,
        "%n== fanout: 3-node loopback cluster, leader %s; closed-loop Acquire with %d in flight through the leader, "
            + "%s s warmup + %s s measured per phase; %d watchers on the leader over %d channels in each watched phase%n",
        leader.id(),
        options.inFlight,
        options.fanoutWarmup.toSeconds(),
        options.fanoutDuration.toSeconds(),
        options.watchers,
        Math.min(options.channels, options.watchers));
    // Closed in reverse: the watchers' process exits before the control groups go.
    try (CpuSplit cpus =
            options.watchersIn == Options.WatchersIn.CAPPED_PROCESS
                ? CpuSplit.create(options.watcherCores, Runtime.getRuntime().availableProcessors())
                : null;
        WatcherFleet watchers = newFleet(leader, cpus)) {
      fleet = watchers;
      split = cpus;
      return run(leader);
    } finally {
      fleet = null;
      split = null;
    }
  }

  private WatcherFleet newFleet(LeaseholdNode leader, CpuSplit cpus) {
    int channels = Math.min(options.channels, options.watchers);
    if (options.watchersIn == Options.WatchersIn.JVM) {
      return new LocalWatchers(
          () -> cluster.channel(leader, options.watchCompression), channels, false);
    }
    try {
      String where =
          cpus == null
              ? null
              : String.format(
                  Locale.ROOT,
                  "in a child process with %.2f cores of its own",
                  cpus.watcherCores());
      WatcherProcess child =
          WatcherProcess.start(
              leader.clientAddress(),
              channels,
              options.watchersIn == Options.WatchersIn.IDLE_PROCESS,
              options.watchCompression,
              where);
      if (cpus != null) {
        try {
          cpus.moveToWatchers(child.pid());
          cpus.moveToCluster(ProcessHandle.current().pid());
        } catch (RuntimeException e) {
          child.close();
          throw e;
        }
        out.printf(Locale.ROOT, "  CPU split: %s%n", cpus.describe());
      }
      out.printf(Locale.ROOT, "  watchers run %s (pid %d)%n", child.where(), child.pid());
      return child;
    } catch (IOException e) {
      throw new UncheckedIOException("starting the watcher process", e);
    }
  }

  private Result run(LeaseholdNode leader) throws InterruptedException {
    ManagedChannel acquireChannel = cluster.writerChannel(leader, options.writerSharesWatchersLoop);
    // The watch paths (server senders, the clients' readers) first run when watchers appear: the
    // JVM warm-up before this (Acquire load only) does not compile them, and C2 took a fifth of
    // the cores during the first watched phase. A discarded watched round gets them compiled.
    // Warm-up rounds take the views in turn, so that each one's encoding is compiled.
    for (int i = 1; i <= options.fanoutWarmupRounds; i++) {
      EventView view = options.views.get((i - 1) % options.views.size());
      phase(
          "w" + i,
          "warm-up with "
              + options.watchers
              + " watchers, "
              + Options.viewName(view)
              + " view (not counted)",
          options.watchers,
          view,
          leader,
          acquireChannel);
    }
    List<Phase> phases = new ArrayList<>();
    phases.add(phase("p1", "no watchers", 0, EventView.EVENT_VIEW_FULL, leader, acquireChannel));
    List<EventView> views = options.phaseViews();
    for (EventView view : views) {
      int n = phases.size();
      phases.add(
          phase(
              "p" + (n + 1),
              options.watchers + " watchers, " + Options.viewName(view) + " view",
              options.watchers,
              view,
              leader,
              acquireChannel));
      phases.add(
          phase(
              "p" + (n + 2),
              "no watchers again",
              0,
              EventView.EVENT_VIEW_FULL,
              leader,
              acquireChannel));
    }
    boolean leaderUnchanged = cluster.leader().map(l -> l == leader).orElse(false);
    Result result =
        new Result(phases, views, options.watchers, fleet.where(), leaderUnchanged, split != null);
    for (Comparison c : result.comparisons()) {
      out.printf(
          Locale.ROOT,
          "  %s view: no watchers %.0f/s, %d watchers %.0f/s, no watchers again %.0f/s; "
              + "with/without (mean of the two no-watcher phases, %.0f/s) = %.3f%n",
          Options.viewName(c.view()),
          c.before().throughput(),
          options.watchers,
          c.watched().throughput(),
          c.after().throughput(),
          c.baseline(),
          c.ratio());
    }
    if (!leaderUnchanged) {
      out.println("  WARNING: the leader changed during the run; the numbers mix two leaders");
    }
    return result;
  }

  /**
   * Every node snapshots at a fixed count of entries (100,000 by default), which at these rates
   * falls every minute or so: inside one 15 s phase and not the next, it took a twentieth of that
   * phase's CPU and tilted the ratio. A snapshot on every node just before each phase puts the next
   * one more entries away than a phase writes.
   */
  private void snapshotEveryNode() {
    for (LeaseholdNode node : cluster.nodes()) {
      ManagedChannel channel = adminChannels.computeIfAbsent(node, cluster::channel);
      try {
        TakeSnapshotResponse r =
            ClusterGrpc.newBlockingStub(channel)
                .withDeadlineAfter(120, TimeUnit.SECONDS)
                .takeSnapshot(TakeSnapshotRequest.getDefaultInstance());
        out.printf(
            Locale.ROOT,
            "  snapshot on %s at index %d (%d bytes), so that none falls inside the phase%n",
            r.getId(),
            r.getIndex(),
            r.getSizeBytes());
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.FAILED_PRECONDITION) {
          throw e;
        }
        // With --jvm-warmup=0 the first phase starts on a cluster that has stored nothing yet.
        out.printf(
            Locale.ROOT, "  no snapshot on %s: %s%n", node.id(), e.getStatus().getDescription());
      }
    }
  }

  /**
   * Writes every node's memtables out and waits for the compactions that follow. A memtable flush
   * and its compaction took up to 0.4 of the two cores for seconds, in whichever 5 s phase it fell,
   * watched or not (seven no-watcher and eight watched phases in one set of runs): that phase's
   * ratio moved by up to half. Settled first, a phase writes too little to fill a memtable, and
   * carries only its own writes' background work.
   */
  private void settleEveryStore() throws InterruptedException {
    long start = System.nanoTime();
    for (LeaseholdNode node : cluster.nodes()) {
      if (node.stateMachine().core().store() instanceof RocksDbStore rocks) {
        try {
          if (!rocks.settle(Duration.ofSeconds(60))) {
            out.printf(
                Locale.ROOT,
                "  WARNING: %s's store still flushing or compacting after 60 s%n",
                node.id());
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    out.printf(
        Locale.ROOT,
        "  stores flushed and compacted in %d ms, so that no phase carries the last one's%n",
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
  }

  private Phase phase(
      String tag,
      String name,
      int watcherCount,
      EventView view,
      LeaseholdNode leader,
      ManagedChannel acquireChannel)
      throws InterruptedException {
    out.printf(Locale.ROOT, "-- phase %s: %s%n", tag, name);
    snapshotEveryNode();
    settleEveryStore();
    if (watcherCount > 0) {
      WatchRequest request =
          WatchRequest.newBuilder()
              .setPrefix(LatencyBenchmark.PREFIX)
              .setStartRevision(0)
              .setView(view)
              .build();
      double openMs = fleet.open(watcherCount, request);
      BenchCluster.await(
          "the leader's hub to count " + watcherCount + " watchers",
          Duration.ofSeconds(30),
          () -> leader.watchHub().watchers() == watcherCount);
      out.printf(
          Locale.ROOT,
          "  %d watches open and started in %.0f ms (leader hub: %d watchers)%n",
          watcherCount,
          openMs,
          leader.watchHub().watchers());
    } else if (leader.watchHub().watchers() != 0) {
      BenchCluster.awaitQuietly(Duration.ofSeconds(30), () -> leader.watchHub().watchers() == 0);
      out.printf(
          Locale.ROOT, "  (leader hub still counts %d watchers)%n", leader.watchHub().watchers());
    }

    ClosedLoop loop = new ClosedLoop(LeasesGrpc.newStub(acquireChannel), tag, options);
    long start = System.nanoTime();
    long measureStart = start + options.fanoutWarmup.toNanos();
    long measureEnd = measureStart + options.fanoutDuration.toNanos();
    loop.start(options.inFlight);
    sleepUntil(measureStart);
    CpuProfile cpu0 = CpuProfile.take();
    double fleetCpu0 = fleet.cpuSeconds();
    CpuSplit.Throttling clusterThrottled0 = split == null ? null : split.clusterThrottling();
    CpuSplit.Throttling watchersThrottled0 = split == null ? null : split.watcherThrottling();
    int gc0 = GcPauses.mark();
    profiler.start();
    long granted0 = loop.granted.sum();
    long t0 = System.nanoTime();
    loop.latency.reset();
    long nextReport = t0 + TimeUnit.SECONDS.toNanos(5);
    while (nextReport < measureEnd) {
      sleepUntil(nextReport);
      if (watcherCount > 0) {
        progress(loop, (nextReport - t0) / 1e9);
      }
      nextReport += TimeUnit.SECONDS.toNanos(5);
    }
    sleepUntil(measureEnd);
    long granted1 = loop.granted.sum();
    long t1 = System.nanoTime();
    CpuProfile cpu1 = CpuProfile.take();
    double fleetCores = (fleet.cpuSeconds() - fleetCpu0) / cpu1.wallSecondsSince(cpu0);
    String throttling =
        split == null
            ? null
            : String.format(
                Locale.ROOT,
                "CPU split: this JVM used up its %.2f cores in %s of the kernel's %d ms periods, the watchers' process its %.2f in %s",
                split.clusterCores(),
                split.clusterThrottling().since(clusterThrottled0).percent(),
                CpuSplit.PERIOD_MICROS / 1000,
                split.watcherCores(),
                split.watcherThrottling().since(watchersThrottled0).percent());
    String gc = GcPauses.since(gc0, cpu1.wallSecondsSince(cpu0));
    profiler.stop("fanout-" + tag);
    Histogram latency = loop.latency.getIntervalHistogram();
    loop.stop = true;
    boolean quiet =
        BenchCluster.awaitQuietly(Duration.ofSeconds(60), () -> loop.outstanding.get() == 0);
    long loadStopped = System.nanoTime();
    double throughput = (granted1 - granted0) / ((t1 - t0) / 1e9);
    long granted = loop.granted.sum();
    out.printf(
        Locale.ROOT,
        "  throughput %.0f acquisitions/s (%d GRANTED in %.2f s measured); phase total %d GRANTED, %d other outcome, "
            + "%d errors%s%s%n",
        throughput,
        granted1 - granted0,
        (t1 - t0) / 1e9,
        granted,
        loop.notGranted.sum(),
        loop.errors.sum(),
        loop.errorsByStatus.isEmpty() ? "" : " " + loop.errorsByStatus,
        quiet ? "" : " (some acquires never answered)");
    out.printf(
        Locale.ROOT,
        "  acquire latency (closed loop, %d in flight): %s%n",
        options.inFlight,
        Stats.line(latency));

    int complete = 0;
    int over = 0;
    int failed = 0;
    double drainMs = 0;
    boolean drained = true;
    if (watcherCount > 0) {
      long behindAtStop = Math.max(0, granted - fleet.seen().fewest());
      drained = fleet.awaitAll(granted, options.drainTimeout);
      drainMs = (System.nanoTime() - loadStopped) / 1e6;
      Thread.sleep(200); // let late duplicates show
      WatcherFleet.Tally t = fleet.tally(granted);
      complete = t.complete();
      over = t.over();
      failed = t.failed();
      out.printf(
          Locale.ROOT,
          "  watchers (%s): %d of %d saw every one of the phase's %d acquisitions exactly (count equal); %d saw more, "
              + "%d failed%s; fewest seen %d; %d streams out of revision order; %d other events%n",
          fleet.where(),
          complete,
          t.watchers(),
          granted,
          over,
          failed,
          t.failures().isEmpty() ? "" : " " + t.failures(),
          t.fewestSeen(),
          t.outOfOrder(),
          t.other());
      out.printf(
          Locale.ROOT,
          "  the server sent %d messages carrying %d events to the %d watchers: %.2f events per message, "
              + "%.1f bytes per event (%s view; messages as protobuf encodes them, without gRPC and HTTP/2 framing), "
              + "%.1f on the wire (%s)%n",
          t.messages(),
          t.events(),
          t.watchers(),
          t.messages() == 0 ? 0.0 : (double) t.events() / t.messages(),
          t.events() == 0 ? 0.0 : (double) t.bytes() / t.events(),
          Options.viewName(view),
          t.events() == 0 ? 0.0 : (double) t.wireBytes() / t.events(),
          options.watchCompression ? "lz4-block where a message is large enough" : "uncompressed");
      if (t.example() != null) {
        out.printf(Locale.ROOT, "  e.g. %s%n", t.example());
      }
      out.printf(
          Locale.ROOT,
          "  furthest watcher was %d events behind when the load stopped; all caught up %s %.0f ms after%n",
          behindAtStop,
          drained ? "" : "NOT (gave up)",
          drainMs);
      fleet.cancel();
      BenchCluster.awaitQuietly(Duration.ofSeconds(30), () -> leader.watchHub().watchers() == 0);
    }
    Cpu cores =
        options.writerSharesWatchersLoop
            ? Cpu.UNKNOWN
            : new Cpu(
                cpu1.processCoresSince(cpu0),
                cpu1.javaCoresSince(cpu0, "bench-writer-elg"),
                options.watchersIn == Options.WatchersIn.JVM
                    ? cpu1.javaCoresSince(cpu0, "bench-client-elg")
                    : (watcherCount > 0 ? fleetCores : 0),
                options.watchersIn == Options.WatchersIn.JVM);
    Phase phase =
        new Phase(
            name,
            watcherCount,
            throughput,
            granted,
            loop.notGranted.sum(),
            loop.errors.sum(),
            latency,
            complete,
            over,
            failed,
            drainMs,
            drained,
            cpu1.jitCoresSince(cpu0),
            cpu1.markingCoresSince(cpu0),
            cores);
    if (options.topThreads > 0) {
      out.println("  CPU during the measured period:");
      cpu1.since(cpu0, options.topThreads).forEach(l -> out.println("    " + l));
      out.println("    " + gc);
      if (phase.marked()) {
        out.printf(
            Locale.ROOT,
            "    G1's concurrent marking ran in this phase (%.2f cores): its throughput is lower for it%n",
            phase.markingCores());
      }
      if (!Double.isNaN(fleetCores)) {
        out.printf(
            Locale.ROOT,
            "    the watchers' process (not in the figures above): %.2f cores%n",
            fleetCores);
      }
      if (throttling != null) {
        out.println("    " + throttling);
      }
    }
    return phase;
  }

  private void progress(ClosedLoop loop, double at) {
    long granted = loop.granted.sum();
    WatcherFleet.Seen seen = fleet.seen();
    out.printf(
        Locale.ROOT,
        "  t=%.0fs: %d GRANTED so far; watchers have seen min %d, mean %.0f (behind by up to %d)%n",
        at,
        granted,
        seen.fewest(),
        (double) seen.total() / options.watchers,
        Math.max(0, granted - seen.fewest()));
  }

  private static void sleepUntil(long deadline) throws InterruptedException {
    long wait;
    while ((wait = deadline - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.sleep(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(100)));
    }
  }
}
