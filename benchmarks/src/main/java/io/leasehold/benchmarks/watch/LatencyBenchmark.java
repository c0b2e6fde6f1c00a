package io.leasehold.benchmarks.watch;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.WatchRequest;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Commit-to-watcher latency: an open-loop load of Acquires of distinct names at a fixed rate
 * through the leader (async stub, paced on System.nanoTime, never waiting for one reply before the
 * next send), with one Watch on the leader and one on a follower.
 *
 * <p>The nodes run in this JVM, or one JVM each ({@code --nodes=process}, {@link NodeProcesses}).
 *
 * <p>Per watcher and acquisition, four numbers:
 *
 * <ul>
 *   <li>commit-to-watch = watcher receipt − when the leader found the entry committed, both on
 *       System.nanoTime (the machine's one monotonic clock, whichever process reads it: see {@link
 *       CommitTimes}). The leader's {@link io.leasehold.server.raft.CommitClock} reports its commit
 *       index moving a few microseconds after it moved (never before), so this is commit-to-watcher
 *       as the target states it, if anything a little short. The target is judged on it;
 *   <li>stamp-to-watch = watcher receipt − the event's time, on the machine's one wall clock. The
 *       event's time is the leader's stamp, taken before the entry is appended (so before it
 *       commits): an upper bound of commit-to-watcher that also holds the commit itself (the
 *       leader's sync and a follower's round trip). Judged too, as the stricter reading;
 *   <li>send-to-watch = watcher receipt − client send: a looser upper bound (it also contains the
 *       client→leader hop and any queue in front of the stamp);
 *   <li>reply-to-watch = watcher receipt − client receipt of the Acquire reply: how much later than
 *       the writer a watcher learns of the change (negative, recorded as 0 and counted, when the
 *       watcher was first).
 * </ul>
 */
final class LatencyBenchmark {
  static final String PREFIX = "bench/";

  /** How long before the recorded period every node is asked for a snapshot (see {@link #run}). */
  static final Duration PRE_SNAPSHOT = Duration.ofSeconds(10);

  /** What the summary needs. */
  record Result(
      String mode,
      double targetRate,
      double achievedRate,
      long granted,
      long planned,
      long notGranted,
      long errors,
      WatcherResult leader,
      WatcherResult follower,
      boolean leaderUnchanged,
      double replyRate,
      double lastReplyLagMs,
      double jitCores,
      String snapshots) {
    boolean complete() {
      return notGranted == 0
          && errors == 0
          && leader.exactlyOnce()
          && follower.exactlyOnce()
          && leaderUnchanged;
    }
  }

  record WatcherResult(
      String where,
      Histogram commitToWatch,
      long negativeCommitToWatch,
      long noCommitTime,
      Histogram stampToWatch,
      Histogram sendToWatch,
      Histogram replyToWatch,
      long negativeReplyToWatch,
      long missed,
      long duplicates,
      long outOfOrder,
      long unexpected,
      long seenNotGranted,
      String error,
      SortedMap<Integer, Integer> overBoundBySecond) {
    boolean exactlyOnce() {
      return missed == 0 && duplicates == 0 && outOfOrder == 0 && error == null;
    }
  }

  private final LatencyCluster cluster;
  private final Options options;
  private final PrintStream out;
  private final PhaseProfiler profiler;

  LatencyBenchmark(
      LatencyCluster cluster, Options options, PrintStream out, PhaseProfiler profiler) {
    this.cluster = cluster;
    this.options = options;
    this.out = out;
    this.profiler = profiler;
  }

  Result run() throws InterruptedException {
    LatencyCluster.Node leader = cluster.awaitReadyLeader(Duration.ofSeconds(30));
    LatencyCluster.Node follower = cluster.follower();
    double rate = options.rate;
    int warmCount = (int) Math.round(rate * options.warmup.toNanos() / 1e9);
    int measureCount = (int) Math.round(rate * options.duration.toNanos() / 1e9);
    int total = warmCount + measureCount;
    out.printf(
        Locale.ROOT,
        "%n== latency: 3-node loopback cluster %s, leader %s, watchers on %s (leader) and %s (follower); "
            + "open-loop Acquire at %.0f/s through the leader, %d warmup + %d recorded acquisitions%n",
        cluster.where(),
        leader.id(),
        leader.id(),
        follower.id(),
        rate,
        warmCount,
        measureCount);

    ManagedChannel acquireChannel = cluster.writerChannel(leader, options.writerSharesWatchersLoop);
    LeasesGrpc.LeasesStub stub = LeasesGrpc.newStub(acquireChannel);
    LatencyWatcher onLeader = new LatencyWatcher("leader " + leader.id(), total);
    LatencyWatcher onFollower = new LatencyWatcher("follower " + follower.id(), total);
    WatchRequest watch = WatchRequest.newBuilder().setPrefix(PREFIX).setStartRevision(0).build();
    LeasesGrpc.newStub(cluster.channel(leader, options.watchCompression)).watch(watch, onLeader);
    LeasesGrpc.newStub(cluster.channel(follower, options.watchCompression))
        .watch(watch, onFollower);
    BenchCluster.await(
        "both watches to start (first response)",
        Duration.ofSeconds(30),
        () -> onLeader.started && onFollower.started);

    long appliedBefore = leader.appliedIndex();
    // When the leader found each log entry committed, by its index less the commit index now. The
    // acquisitions take about one entry each; the rest are Ratis's and the expiry's.
    long commitBase = leader.commitIndex();
    int commitWindow = 2 * total + 10_000;
    leader.recordCommits(commitBase, commitWindow);
    // Traced only where both nodes run in this JVM.
    FollowerPath followerPath =
        leader.inThisJvm().isPresent() && follower.inThisJvm().isPresent()
            ? new FollowerPath(
                leader.inThisJvm().get(), follower.inThisJvm().get(), commitBase, commitWindow)
            : null;
    AtomicLongArray sendNs = new AtomicLongArray(total);
    AtomicLongArray replyNs = new AtomicLongArray(total);
    AtomicIntegerArray outcome =
        new AtomicIntegerArray(total); // 0 pending, 1 granted, 2 other outcome, 3 error
    AtomicInteger pending = new AtomicInteger();
    Map<String, AtomicInteger> errorsByStatus = new ConcurrentHashMap<>();
    com.google.protobuf.Duration ttl =
        com.google.protobuf.Duration.newBuilder().setSeconds(options.ttl.toSeconds()).build();
    Histogram scheduleLag = Stats.nanosHistogram();

    // Every 5 s: how far sending, replies, each node's applied index and each watcher have got.
    AtomicInteger sentSoFar = new AtomicInteger();
    AtomicInteger grantedSoFar = new AtomicInteger();
    long progressStart = System.nanoTime();
    ScheduledExecutorService reporter =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "bench-progress");
              t.setDaemon(true);
              return t;
            });
    reporter.scheduleAtFixedRate(
        () ->
            out.printf(
                Locale.ROOT,
                "  t=%.0fs: sent %d, GRANTED replies %d, in flight %d; applied index leader %d, follower %d; watcher saw leader %d, follower %d%n",
                (System.nanoTime() - progressStart) / 1e9,
                sentSoFar.get(),
                grantedSoFar.get(),
                pending.get(),
                leader.appliedIndex(),
                follower.appliedIndex(),
                onLeader.distinct.get(),
                onFollower.distinct.get()),
        5,
        5,
        TimeUnit.SECONDS);
    long t0 = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1);
    CpuProfile cpuStart = null;
    int gcMark = 0;
    long periodStartUptimeMs = 0;
    Map<String, Long> snapshotsBefore = Map.of();
    int snapshotAt =
        options.snapshotAt == null
            ? -1
            : warmCount + (int) Math.round(rate * options.snapshotAt.toNanos() / 1e9);
    // Every node snapshots once per 100,000 entries (its threshold counts from its latest
    // snapshot), all at about the same index. Where the last one before the recorded period fell
    // depends on the warm-ups, so a period held none, one or, when the requested one came soon
    // after
    // the threshold's, two. One taken PRE_SNAPSHOT before the period fixes that: the threshold's
    // next one is then due 100,000 entries later, after the one --snapshot-at asks for, which
    // moves it on again.
    int preSnapshotAt =
        options.warmup.compareTo(PRE_SNAPSHOT.multipliedBy(3).dividedBy(2)) >= 0
            ? warmCount - (int) Math.round(rate * PRE_SNAPSHOT.toNanos() / 1e9)
            : -1;
    for (int i = 0; i < total; i++) {
      long target = t0 + (long) (i * 1e9 / rate);
      long wait;
      while ((wait = target - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait);
      }
      if (i == warmCount) {
        cpuStart = CpuProfile.take();
        gcMark = GcPauses.mark();
        cluster.markPeriod();
        profiler.start();
        snapshotsBefore = latestSnapshots();
        periodStartUptimeMs = ManagementFactory.getRuntimeMXBean().getUptime();
      }
      if (i == preSnapshotAt) {
        snapshotEveryNode(
            progressStart,
            PRE_SNAPSHOT.toSeconds()
                + " s before the recorded period; the threshold's next one is due "
                + "100,000 entries after it");
      }
      if (i == snapshotAt) {
        snapshotEveryNode(progressStart, "--snapshot-at");
      }
      final int seq = i;
      AcquireRequest request =
          AcquireRequest.newBuilder()
              .setName(PREFIX + seq)
              .setHolder("bench-client")
              .setTtl(ttl)
              .build();
      pending.incrementAndGet();
      sentSoFar.incrementAndGet();
      long sent = System.nanoTime();
      sendNs.set(seq, sent);
      if (seq >= warmCount) {
        scheduleLag.recordValue(Math.max(0, sent - target));
      }
      stub.withDeadlineAfter(60, TimeUnit.SECONDS)
          .acquire(
              request,
              new StreamObserver<>() {
                @Override
                public void onNext(AcquireResponse r) {
                  replyNs.set(seq, System.nanoTime());
                  outcome.set(seq, r.getOutcome() == Outcome.GRANTED ? 1 : 2);
                  if (r.getOutcome() == Outcome.GRANTED) {
                    grantedSoFar.incrementAndGet();
                  }
                }

                @Override
                public void onError(Throwable t) {
                  replyNs.set(seq, System.nanoTime());
                  outcome.set(seq, 3);
                  errorsByStatus
                      .computeIfAbsent(
                          Status.fromThrowable(t).getCode().toString(), k -> new AtomicInteger())
                      .incrementAndGet();
                  pending.decrementAndGet();
                }

                @Override
                public void onCompleted() {
                  pending.decrementAndGet();
                }
              });
    }
    long lastSend = sendNs.get(total - 1);
    // Every call has a 60 s deadline, so all of them end within about that.
    boolean allReplied =
        BenchCluster.awaitQuietly(Duration.ofSeconds(75), () -> pending.get() == 0);
    long lastReply = 0;
    for (int i = warmCount; i < total; i++) {
      lastReply = Math.max(lastReply, replyNs.get(i));
    }
    CpuProfile cpuEnd = CpuProfile.take();
    String gc = GcPauses.since(gcMark, cpuStart == null ? 0 : cpuEnd.wallSecondsSince(cpuStart));
    profiler.stop("latency");
    String snapshots = reportSnapshots(snapshotsBefore, latestSnapshots());

    // Judged on the recorded acquisitions; the warmup's are counted apart (a cold cluster may
    // refuse
    // some with RESOURCE_EXHAUSTED), and every GRANTED one must still reach both watchers.
    long[] recorded = new long[4]; // by outcome: 0 no reply, 1 granted, 2 other outcome, 3 error
    long[] warm = new long[4];
    for (int i = 0; i < total; i++) {
      (i < warmCount ? warm : recorded)[outcome.get(i)]++;
    }
    long granted = warm[1] + recorded[1];
    long notGranted = recorded[2];
    long errors = recorded[3] + recorded[0];
    final long expected = granted;
    long drainStart = System.nanoTime();
    boolean drained =
        BenchCluster.awaitQuietly(
            options.drainTimeout,
            () -> onLeader.distinct.get() >= expected && onFollower.distinct.get() >= expected);
    double drainMs = (System.nanoTime() - drainStart) / 1e6;
    // A moment for late duplicates to show, then stop watching.
    Thread.sleep(200);
    onLeader.cancel("benchmark done");
    onFollower.cancel("benchmark done");
    CommitTimes commits = leader.commitTimes();
    if (followerPath != null) {
      followerPath.stop();
    }
    reporter.shutdownNow();
    boolean leaderUnchanged = cluster.leader().map(l -> l.id().equals(leader.id())).orElse(false);

    double sendSpan = (lastSend - sendNs.get(warmCount)) / 1e9;
    double achieved = measureCount > 1 ? (measureCount - 1) / sendSpan : Double.NaN;
    Histogram acquireLatency = Stats.nanosHistogram();
    for (int i = warmCount; i < total; i++) {
      if (outcome.get(i) == 1) {
        acquireLatency.recordValue(Math.max(0, replyNs.get(i) - sendNs.get(i)));
      }
    }
    out.printf(
        Locale.ROOT,
        "  sent %d recorded acquisitions in %.3f s = %.1f/s (target %.0f/s), from %.3f s of this JVM's uptime "
            + "(as a GC log's uptime stamps count); schedule lag %s%n",
        measureCount,
        sendSpan,
        achieved,
        rate,
        periodStartUptimeMs / 1e3,
        Stats.line(scheduleLag));
    out.printf(
        Locale.ROOT,
        "  replies to the %d recorded acquisitions: %d GRANTED, %d other outcome, %d errors/no reply; to the %d warmup ones: "
            + "%d GRANTED, %d other outcome, %d errors/no reply%s%s%n",
        measureCount,
        recorded[1],
        notGranted,
        errors,
        warmCount,
        warm[1],
        warm[2],
        warm[3] + warm[0],
        errorsByStatus.isEmpty() ? "" : "; errors by status (both) " + errorsByStatus,
        allReplied ? "" : " (gave up waiting for replies after 75 s)");
    long firstRecordedSend = sendNs.get(warmCount);
    long repliedInWindow = 0;
    for (int i = 0; i < total; i++) {
      long r = replyNs.get(i);
      if (outcome.get(i) == 1 && r >= firstRecordedSend && r <= lastSend) {
        repliedInWindow++;
      }
    }
    out.printf(
        Locale.ROOT,
        "  GRANTED replies received while sending the recorded acquisitions: %.1f/s; last recorded reply %.1f ms after "
            + "the last send%s%n",
        repliedInWindow / sendSpan,
        (lastReply - lastSend) / 1e6,
        lastReply - lastSend > TimeUnit.SECONDS.toNanos(1)
            ? " (the cluster did not keep up with the offered rate)"
            : "");
    out.printf(
        Locale.ROOT, "  acquire reply latency (reply - send):  %s%n", Stats.line(acquireLatency));
    long appliedAfter = leader.appliedIndex();
    // More entries than acquisitions: Ratis metadata (commit-info) entries, expiry, compaction,
    // retries; fewer: some
    // acquisitions were still queued (or never proposed) when this was read.
    out.printf(
        Locale.ROOT,
        "  the leader's applied index advanced by %d log entries while these %d acquisitions were sent and answered%n",
        appliedAfter - appliedBefore,
        total);
    out.printf(
        Locale.ROOT,
        "  watchers %s every event %.0f ms after the last reply%s%n",
        drained ? "had" : "did NOT have",
        drainMs,
        drained ? "" : " (timed out after " + options.drainTimeout.toSeconds() + " s)");

    WatcherResult leaderResult =
        onLeader.result(warmCount, total, sendNs, replyNs, outcome, commits);
    WatcherResult followerResult =
        onFollower.result(warmCount, total, sendNs, replyNs, outcome, commits);
    for (WatcherResult w : List.of(leaderResult, followerResult)) {
      out.printf(Locale.ROOT, "  watcher on %s:%n", w.where());
      out.printf(
          Locale.ROOT,
          "    commit-to-watch (from the leader's commit):        %s%n",
          Stats.line(w.commitToWatch()));
      if (w.negativeCommitToWatch() > 0 || w.noCommitTime() > 0) {
        out.printf(
            Locale.ROOT,
            "    commit-to-watch caveats: %d watched before the leader reported the commit (recorded as 0), "
                + "%d with no commit time%n",
            w.negativeCommitToWatch(),
            w.noCommitTime());
      }
      out.printf(
          Locale.ROOT,
          "    commit-to-watch over %.0f ms: %s%n",
          WatchBenchmark.TARGET_P99_MS,
          overBound(w));
      out.printf(
          Locale.ROOT,
          "    stamp-to-watch (also holds the commit itself):     %s%n",
          Stats.line(w.stampToWatch()));
      out.printf(
          Locale.ROOT,
          "    send-to-watch  (adds the client's hop and queue):   %s%n",
          Stats.line(w.sendToWatch()));
      out.printf(
          Locale.ROOT,
          "    reply-to-watch (max(0, watch - reply)):            %s%n",
          Stats.line(w.replyToWatch()));
      out.printf(
          Locale.ROOT,
          "    watch before the reply (reply-to-watch < 0): %d of %d (%.1f%%)%n",
          w.negativeReplyToWatch(),
          w.replyToWatch().getTotalCount(),
          100.0 * w.negativeReplyToWatch() / Math.max(1, w.replyToWatch().getTotalCount()));
      out.printf(
          Locale.ROOT,
          "    delivery: %d granted acquisitions (warmup included), %d missed, %d duplicated, %d out of revision order, "
              + "%d unexpected events; %d events of acquisitions whose reply was not GRANTED (e.g. timed out at the client, "
              + "committed anyway)%s%n",
          granted,
          w.missed(),
          w.duplicates(),
          w.outOfOrder(),
          w.unexpected(),
          w.seenNotGranted(),
          w.error() == null ? "" : "; stream ended: " + w.error());
      if (w == followerResult && followerPath != null) {
        followerPath.report(out, onFollower.watched(warmCount, total, outcome, commits));
      }
    }
    if (!leaderUnchanged) {
      out.println("  WARNING: the leader changed during the run; the numbers mix two leaders");
    }
    LatencyCluster.PeriodReport nodesApart =
        cpuStart == null
            ? LatencyCluster.PeriodReport.NONE
            : cluster.periodReport(options.topThreads);
    if (cpuStart != null && options.topThreads > 0) {
      out.println(
          "  CPU during the recorded period (first recorded send to last reply)"
              + (nodesApart.lines().isEmpty()
                  ? ":"
                  : String.format(
                      Locale.ROOT,
                      ", %.2f cores in all; this process (clients and load) first, then each node's:",
                      cpuEnd.processCoresSince(cpuStart) + nodesApart.cores())));
      cpuEnd.since(cpuStart, options.topThreads).forEach(l -> out.println("    " + l));
      out.println("    " + gc);
      nodesApart.lines().forEach(l -> out.println("    " + l));
    }
    return new Result(
        "latency",
        rate,
        achieved,
        recorded[1],
        measureCount,
        notGranted,
        errors,
        leaderResult,
        followerResult,
        leaderUnchanged,
        repliedInWindow / sendSpan,
        (lastReply - lastSend) / 1e6,
        cpuStart == null ? 0 : cpuEnd.jitCoresSince(cpuStart) + nodesApart.jitCores(),
        snapshots);
  }

  /**
   * How many events took longer than (A)'s p99 bound from commit to watcher, and in which seconds
   * of the period (by commit time) most of them fell: e.g. "412 (0.41%) in 31 seconds; most at 50
   * s: 180, 51 s: 95, 12 s: 9".
   */
  static String overBound(WatcherResult w) {
    int total = w.overBoundBySecond().values().stream().mapToInt(Integer::intValue).sum();
    if (total == 0) {
      return "none";
    }
    StringBuilder most = new StringBuilder();
    w.overBoundBySecond().entrySet().stream()
        .sorted(
            Map.Entry.<Integer, Integer>comparingByValue()
                .reversed()
                .thenComparing(Map.Entry.comparingByKey()))
        .limit(5)
        .forEach(
            e ->
                most.append(most.length() == 0 ? "" : ", ")
                    .append(e.getKey())
                    .append(" s: ")
                    .append(e.getValue()));
    return String.format(
        Locale.ROOT,
        "%d (%.2f%%) in %d seconds of the period; most at %s",
        total,
        100.0 * total / Math.max(1, w.commitToWatch().getTotalCount()),
        w.overBoundBySecond().size(),
        most);
  }

  /** Each node's latest snapshot index (0: none yet). */
  private Map<String, Long> latestSnapshots() {
    Map<String, Long> out = new TreeMap<>();
    for (LatencyCluster.Node node : cluster.nodes()) {
      out.put(node.id(), node.latestSnapshotIndex());
    }
    return out;
  }

  /**
   * Which nodes wrote a snapshot during the recorded period (the latest one each, so two on one
   * node would show as one). They write at once, on the same two cores and disk here.
   */
  private String reportSnapshots(Map<String, Long> before, Map<String, Long> after) {
    List<String> taken = new ArrayList<>();
    after.forEach(
        (id, index) -> {
          if (index > before.getOrDefault(id, 0L)) {
            taken.add(id + " at index " + index);
          }
        });
    String snapshots = taken.isEmpty() ? "none" : String.join(", ", taken);
    out.println("  snapshots written during the recorded period: " + snapshots);
    return snapshots;
  }

  /** Every node starts one at once, as their common threshold makes them. */
  private void snapshotEveryNode(long progressStart, String why) {
    out.printf(
        Locale.ROOT,
        "  t=%.1fs: a snapshot asked of every node (%s)%n",
        (System.nanoTime() - progressStart) / 1e9,
        why);
    for (LatencyCluster.Node node : cluster.nodes()) {
      node.startSnapshot(
          done ->
              out.printf(
                  Locale.ROOT, "  t=%.1fs: %s%n", (System.nanoTime() - progressStart) / 1e9, done));
    }
  }
}
