package io.leasehold.benchmarks.watch;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.leasehold.proto.v1.EventView;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.server.LeaseholdNode;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Fan-out: closed-loop Acquire throughput through the leader with no watchers, then for each
 * event view N watchers on the leader (prefix bench/, from now on) followed by no watchers again:
 * each watched phase is compared with the no-watcher phases either side of it, so drift shows.
 * After a watched phase's load stops, waits (up to the drain timeout) until every watcher has seen
 * every acquisition of the phase, and reports how many did.
 */
final class FanoutBenchmark {
  record Phase(String name, int watchers, double throughput, long granted, long notGranted, long errors, Histogram latency,
               int watchersComplete, int watchersOver, int watchersFailed, double drainMs, boolean drained, double jitCores) {}

  /** One view's watched phase against the no-watcher phases before and after it. */
  record Comparison(EventView view, Phase before, Phase watched, Phase after, int watchers) {
    double baseline() {
      return (before.throughput() + after.throughput()) / 2;
    }

    double ratio() {
      return watched.throughput() / baseline();
    }

    boolean everyWatcherSawEverything() {
      return watched.watchersComplete() == watchers && watched.watchersOver() == 0 && watched.watchersFailed() == 0;
    }
  }

  /** Phases: no watchers, then per view (in {@code views} order) watched and no watchers. */
  record Result(List<Phase> phases, List<EventView> views, int watchers, boolean leaderUnchanged) {
    List<Comparison> comparisons() {
      List<Comparison> c = new ArrayList<>();
      for (int k = 0; k < views.size(); k++) {
        c.add(new Comparison(views.get(k), phases.get(2 * k), phases.get(2 * k + 1), phases.get(2 * k + 2), watchers));
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
  private final Map<LeaseholdNode, ManagedChannel> adminChannels = new java.util.HashMap<>();

  FanoutBenchmark(BenchCluster cluster, Options options, PrintStream out, PhaseProfiler profiler) {
    this.cluster = cluster;
    this.options = options;
    this.out = out;
    this.profiler = profiler;
  }

  Result run() throws InterruptedException {
    LeaseholdNode leader = cluster.awaitReadyLeader(Duration.ofSeconds(30));
    out.printf(Locale.ROOT, "%n== fanout: 3-node loopback cluster, leader %s; closed-loop Acquire with %d in flight through the leader, "
            + "%s s warmup + %s s measured per phase; %d watchers on the leader over %d channels in each watched phase%n",
        leader.id(), options.inFlight, options.fanoutWarmup.toSeconds(), options.fanoutDuration.toSeconds(), options.watchers,
        Math.min(options.channels, options.watchers));
    ManagedChannel acquireChannel = cluster.writerChannel(leader, options.writerSharesWatchersLoop);
    // The watch paths (server senders, the clients' readers) first run when watchers appear: the
    // JVM warm-up before this (Acquire load only) does not compile them, and C2 took a fifth of
    // the cores during the first watched phase. A discarded watched round gets them compiled.
    // Warm-up rounds take the views in turn, so that each one's encoding is compiled.
    for (int i = 1; i <= options.fanoutWarmupRounds; i++) {
      EventView view = options.views.get((i - 1) % options.views.size());
      phase("w" + i, "warm-up with " + options.watchers + " watchers, " + Options.viewName(view) + " view (not counted)", options.watchers,
          view, leader, acquireChannel);
    }
    List<Phase> phases = new ArrayList<>();
    phases.add(phase("p1", "no watchers", 0, EventView.EVENT_VIEW_FULL, leader, acquireChannel));
    List<EventView> views = options.phaseViews();
    for (EventView view : views) {
      int n = phases.size();
      phases.add(phase("p" + (n + 1), options.watchers + " watchers, " + Options.viewName(view) + " view", options.watchers, view, leader,
          acquireChannel));
      phases.add(phase("p" + (n + 2), "no watchers again", 0, EventView.EVENT_VIEW_FULL, leader, acquireChannel));
    }
    boolean leaderUnchanged = cluster.leader().map(l -> l == leader).orElse(false);
    Result result = new Result(phases, views, options.watchers, leaderUnchanged);
    for (Comparison c : result.comparisons()) {
      out.printf(Locale.ROOT, "  %s view: no watchers %.0f/s, %d watchers %.0f/s, no watchers again %.0f/s; "
              + "with/without (mean of the two no-watcher phases, %.0f/s) = %.3f%n",
          Options.viewName(c.view()), c.before().throughput(), options.watchers, c.watched().throughput(), c.after().throughput(),
          c.baseline(), c.ratio());
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
        io.leasehold.proto.v1.TakeSnapshotResponse r = io.leasehold.proto.v1.ClusterGrpc.newBlockingStub(channel)
            .withDeadlineAfter(120, TimeUnit.SECONDS)
            .takeSnapshot(io.leasehold.proto.v1.TakeSnapshotRequest.getDefaultInstance());
        out.printf(Locale.ROOT, "  snapshot on %s at index %d (%d bytes), so that none falls inside the phase%n", r.getId(), r.getIndex(),
            r.getSizeBytes());
      } catch (io.grpc.StatusRuntimeException e) {
        if (e.getStatus().getCode() != io.grpc.Status.Code.FAILED_PRECONDITION) {
          throw e;
        }
        // With --jvm-warmup=0 the first phase starts on a cluster that has stored nothing yet.
        out.printf(Locale.ROOT, "  no snapshot on %s: %s%n", node.id(), e.getStatus().getDescription());
      }
    }
  }

  /**
   * Writes every node's memtables out and waits for the compactions that follow. A memtable
   * flush and its compaction took up to 0.4 of the two cores for seconds, in whichever 5 s phase
   * it fell, watched or not (seven no-watcher and eight watched phases in the runs of 2026-11-23):
   * that phase's ratio moved by up to half. Settled first, a phase writes too little to fill a
   * memtable, and carries only its own writes' background work.
   */
  private void settleEveryStore() throws InterruptedException {
    long start = System.nanoTime();
    for (LeaseholdNode node : cluster.nodes()) {
      if (node.stateMachine().core().store() instanceof io.leasehold.statemachine.store.RocksDbStore rocks) {
        try {
          if (!rocks.settle(Duration.ofSeconds(60))) {
            out.printf(Locale.ROOT, "  WARNING: %s's store still flushing or compacting after 60 s%n", node.id());
          }
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }
    }
    out.printf(Locale.ROOT, "  stores flushed and compacted in %d ms, so that no phase carries the last one's%n",
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
  }

  private Phase phase(String tag, String name, int watcherCount, EventView view, LeaseholdNode leader, ManagedChannel acquireChannel)
      throws InterruptedException {
    out.printf(Locale.ROOT, "-- phase %s: %s%n", tag, name);
    snapshotEveryNode();
    settleEveryStore();
    List<CountingWatcher> watchers = new ArrayList<>();
    if (watcherCount > 0) {
      int channelCount = Math.min(options.channels, watcherCount);
      List<ManagedChannel> channels = new ArrayList<>();
      for (int i = 0; i < channelCount; i++) {
        channels.add(cluster.channel(leader));
      }
      WatchRequest request = WatchRequest.newBuilder().setPrefix(LatencyBenchmark.PREFIX).setStartRevision(0).setView(view).build();
      long openStart = System.nanoTime();
      for (int i = 0; i < watcherCount; i++) {
        CountingWatcher w = new CountingWatcher();
        watchers.add(w);
        CountingWatch.watch(channels.get(i % channelCount), request, w);
      }
      BenchCluster.await(watcherCount + " watches to start (first response each)", Duration.ofSeconds(120),
          () -> watchers.stream().allMatch(w -> w.started));
      BenchCluster.await("the leader's hub to count " + watcherCount + " watchers", Duration.ofSeconds(30),
          () -> leader.watchHub().watchers() == watcherCount);
      out.printf(Locale.ROOT, "  %d watches open and started in %.0f ms (leader hub: %d watchers)%n", watcherCount,
          (System.nanoTime() - openStart) / 1e6, leader.watchHub().watchers());
    } else if (leader.watchHub().watchers() != 0) {
      BenchCluster.awaitQuietly(Duration.ofSeconds(30), () -> leader.watchHub().watchers() == 0);
      out.printf(Locale.ROOT, "  (leader hub still counts %d watchers)%n", leader.watchHub().watchers());
    }

    ClosedLoop loop = new ClosedLoop(LeasesGrpc.newStub(acquireChannel), tag, options);
    long start = System.nanoTime();
    long measureStart = start + options.fanoutWarmup.toNanos();
    long measureEnd = measureStart + options.fanoutDuration.toNanos();
    loop.start(options.inFlight);
    sleepUntil(measureStart);
    CpuProfile cpu0 = CpuProfile.take();
    int gc0 = GcPauses.mark();
    profiler.start();
    long granted0 = loop.granted.sum();
    long t0 = System.nanoTime();
    loop.latency.reset();
    long nextReport = t0 + TimeUnit.SECONDS.toNanos(5);
    while (nextReport < measureEnd) {
      sleepUntil(nextReport);
      if (!watchers.isEmpty()) {
        progress(loop, watchers, (nextReport - t0) / 1e9);
      }
      nextReport += TimeUnit.SECONDS.toNanos(5);
    }
    sleepUntil(measureEnd);
    long granted1 = loop.granted.sum();
    long t1 = System.nanoTime();
    CpuProfile cpu1 = CpuProfile.take();
    String gc = GcPauses.since(gc0, cpu1.wallSecondsSince(cpu0));
    profiler.stop("fanout-" + tag);
    Histogram latency = loop.latency.getIntervalHistogram();
    loop.stop = true;
    boolean quiet = BenchCluster.awaitQuietly(Duration.ofSeconds(60), () -> loop.outstanding.get() == 0);
    long loadStopped = System.nanoTime();
    double throughput = (granted1 - granted0) / ((t1 - t0) / 1e9);
    long granted = loop.granted.sum();
    out.printf(Locale.ROOT, "  throughput %.0f acquisitions/s (%d GRANTED in %.2f s measured); phase total %d GRANTED, %d other outcome, "
            + "%d errors%s%s%n",
        throughput, granted1 - granted0, (t1 - t0) / 1e9, granted, loop.notGranted.sum(), loop.errors.sum(),
        loop.errorsByStatus.isEmpty() ? "" : " " + loop.errorsByStatus, quiet ? "" : " (some acquires never answered)");
    out.printf(Locale.ROOT, "  acquire latency (closed loop, %d in flight): %s%n", options.inFlight, Stats.line(latency));

    int complete = 0;
    int over = 0;
    int failed = 0;
    double drainMs = 0;
    boolean drained = true;
    if (!watchers.isEmpty()) {
      long behindAtStop = watchers.stream().mapToLong(w -> Math.max(0, granted - w.acquired)).max().orElse(0);
      drained = BenchCluster.awaitQuietly(options.drainTimeout,
          () -> watchers.stream().allMatch(w -> w.acquired >= granted || w.error != null));
      drainMs = (System.nanoTime() - loadStopped) / 1e6;
      Thread.sleep(200);  // let late duplicates show
      Map<String, Integer> failures = new TreeMap<>();
      String example = null;
      long minSeen = Long.MAX_VALUE;
      long outOfOrder = 0;
      long other = 0;
      long messages = 0;
      long bytes = 0;
      long events = 0;
      for (CountingWatcher w : watchers) {
        long seen = w.acquired;
        minSeen = Math.min(minSeen, seen);
        other += w.other;
        messages += w.messagesWithEvents;
        bytes += w.bytesWithEvents;
        events += w.acquired + w.other;
        if (!w.inOrder) {
          outOfOrder++;
        }
        if (w.error != null) {
          failed++;
          failures.merge(w.error, 1, Integer::sum);
          if (example == null && w.description != null) {
            example = w.error + ": " + w.description;
          }
        } else if (seen == granted) {
          complete++;
        } else if (seen > granted) {
          over++;
        }
      }
      out.printf(Locale.ROOT, "  watchers: %d of %d saw every one of the phase's %d acquisitions exactly (count equal); %d saw more, %d failed%s; "
              + "fewest seen %d; %d streams out of revision order; %d other events%n",
          complete, watchers.size(), granted, over, failed, failures.isEmpty() ? "" : " " + failures, minSeen, outOfOrder, other);
      out.printf(Locale.ROOT, "  the server sent %d messages carrying %d events to the %d watchers: %.2f events per message, "
              + "%.1f bytes per event (%s view; messages as protobuf encodes them, without gRPC and HTTP/2 framing)%n",
          messages, events, watchers.size(), messages == 0 ? 0.0 : (double) events / messages, events == 0 ? 0.0 : (double) bytes / events,
          Options.viewName(view));
      if (example != null) {
        out.printf(Locale.ROOT, "  e.g. %s%n", example);
      }
      out.printf(Locale.ROOT, "  furthest watcher was %d events behind when the load stopped; all caught up %s %.0f ms after%n",
          behindAtStop, drained ? "" : "NOT (gave up)", drainMs);
      watchers.forEach(CountingWatcher::cancel);
      BenchCluster.awaitQuietly(Duration.ofSeconds(30), () -> leader.watchHub().watchers() == 0);
    }
    if (options.topThreads > 0) {
      out.println("  CPU during the measured period:");
      cpu1.since(cpu0, options.topThreads).forEach(l -> out.println("    " + l));
      out.println("    " + gc);
    }
    return new Phase(name, watcherCount, throughput, granted, loop.notGranted.sum(), loop.errors.sum(), latency,
        complete, over, failed, drainMs, drained, cpu1.jitCoresSince(cpu0));
  }

  private void progress(ClosedLoop loop, List<CountingWatcher> watchers, double at) {
    long granted = loop.granted.sum();
    long min = Long.MAX_VALUE;
    long sum = 0;
    for (CountingWatcher w : watchers) {
      long a = w.acquired;
      min = Math.min(min, a);
      sum += a;
    }
    out.printf(Locale.ROOT, "  t=%.0fs: %d GRANTED so far; watchers have seen min %d, mean %.0f (behind by up to %d)%n",
        at, granted, min, (double) sum / watchers.size(), Math.max(0, granted - min));
  }

  private static void sleepUntil(long deadline) throws InterruptedException {
    long wait;
    while ((wait = deadline - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.sleep(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(100)));
    }
  }

  /** Counts the events of one Watch stream without building messages (see {@link CountingWatch}). */
  private static final class CountingWatcher implements ClientResponseObserver<WatchRequest, CountingWatch.Counted> {
    private volatile ClientCallStreamObserver<WatchRequest> call;
    volatile boolean started;
    volatile String error;
    volatile String description;
    private volatile boolean cancelling;
    // Single writer (gRPC serializes a call's callbacks); volatile so the main thread reads fresh values.
    volatile long acquired;
    volatile long other;
    volatile long messagesWithEvents;
    volatile long bytesWithEvents;
    volatile boolean inOrder = true;
    private long lastRevision;

    @Override
    public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
      this.call = requestStream;
    }

    @Override
    public void onNext(CountingWatch.Counted c) {
      started = true;
      if (c.events() > 0) {
        if (!c.inOrder() || c.firstRevision() < lastRevision) {
          inOrder = false;
        }
        lastRevision = c.lastRevision();
        messagesWithEvents++;
        bytesWithEvents += c.bytes();
        if (c.acquired() > 0) {
          acquired += c.acquired();
        }
        if (c.other() > 0) {
          other += c.other();
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      if (!cancelling) {
        Status s = Status.fromThrowable(t);
        description = s.getDescription();
        error = s.getCode().toString();
      }
    }

    @Override
    public void onCompleted() {
      error = "completed by the server";
    }

    void cancel() {
      cancelling = true;
      ClientCallStreamObserver<WatchRequest> c = call;
      if (c != null) {
        c.cancel("benchmark phase done", null);
      }
    }

  }
}
