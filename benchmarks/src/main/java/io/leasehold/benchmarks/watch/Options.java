package io.leasehold.benchmarks.watch;

import io.leasehold.proto.v1.EventView;
import io.leasehold.server.watch.WatchHub;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Command-line options of {@link WatchBenchmark}: {@code --name=value} or {@code --name value}. */
final class Options {
  String mode = "all";

  // latency
  double rate = 1000;
  Duration warmup = Duration.ofSeconds(60);
  // One snapshot interval at the target rate (each node snapshots every 100,000 entries), with
  // one snapshot in it: a period's p99 then weighs the snapshot's stall as steady state does. A
  // 20 s period, the earlier default, held none or one, five times steady state's share.
  Duration duration = Duration.ofSeconds(100);

  /** When, into the recorded period, every node starts a snapshot at once; null: none asked for. */
  Duration snapshotAt = Duration.ofSeconds(50);

  /** The latency run's nodes in a JVM each ({@link NodeProcesses}) rather than in this one. */
  boolean nodesApart;

  // fanout
  int inFlight = 64;
  int watchers = 1000;
  int channels = 8;

  /** Where the fan-out's watchers run (see {@link WatcherProcess}). */
  enum WatchersIn {
    JVM,
    PROCESS,
    IDLE_PROCESS,
    CAPPED_PROCESS;

    /** As {@code --watchers-in} spells it. */
    String option() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  WatchersIn watchersIn = WatchersIn.JVM;

  /**
   * With {@code --watchers-in=capped-process}: the watchers' process's cores; this JVM gets the
   * rest (see {@link CpuSplit}).
   */
  double watcherCores = 0.5;

  private boolean watcherCoresGiven;

  /**
   * The acquire load's client channel on the watchers' event loops (the old setup) or on its own.
   */
  boolean writerSharesWatchersLoop;

  // Many short phases, interleaved: on a shared two-core machine the no-watcher throughput drifts
  // by tens of percent within minutes, and one long phase per view measured the drift as much as
  // the watchers (see docs/performance.md, "Reading a run").
  Duration fanoutWarmup = Duration.ofSeconds(2);
  int fanoutWarmupRounds = 10;
  Duration fanoutDuration = Duration.ofSeconds(5);
  List<EventView> views = List.of(EventView.EVENT_VIEW_FULL, EventView.EVENT_VIEW_BASIC);
  int repeats = 5;

  // both
  Duration drainTimeout = Duration.ofSeconds(60);
  Duration ttl = Duration.ofMinutes(30);
  Duration electionMin = Duration.ofMillis(1000);
  Duration electionMax = Duration.ofMillis(1500);
  int topThreads = 12;
  int watchSenders;
  int watchMessageRate;
  int watchMaxDelayMs;

  /**
   * Whether the benchmark's watch clients accept lz4-block (the SDK's default) or only plain
   * messages.
   */
  boolean watchCompression = true;

  Duration jvmWarmup = Duration.ofSeconds(90);
  Path profileDir;
  String profilerLib;

  /** async-profiler's event: cpu (where the CPU goes) or wall (where threads wait, too). */
  String profileEvent = "cpu";

  static final String USAGE =
      String.join(
          "\n",
          "usage: java -cp benchmarks/target/benchmarks.jar io.leasehold.benchmarks.watch.WatchBenchmark [latency|fanout|all] [options]",
          "",
          "  latency: commit-to-watcher latency, open-loop Acquire load through the leader, one watcher on the leader and one on a follower",
          "    --rate=N             acquisitions per second (default 1000)",
          "    --warmup=SECONDS     unrecorded run of the same workload, both watches open, before the recorded one (default 60: the watch",
          "                         paths are compiled only once watched; a shorter one leaves C2 recompiling in the recorded period)",
          "    --duration=SECONDS   recorded period (default 100: at 1,000/s, the 100,000 entries between two snapshots)",
          "    --snapshot-at=SECONDS|none  start a snapshot on every node at once this far into the recorded period, as their common",
          "                         threshold (every 100,000 entries) does (default 50). Every node also snapshots 10 s before the",
          "                         period, so the threshold's next one falls after this one; with none, 100,000 entries after that",
          "                         (90 s into the period at 1,000/s)",
          "    --nodes=jvm|process  where the three nodes run: in this JVM with the clients (default), or one JVM each, as a",
          "                         deployment runs them (each with this JVM's flags; this JVM keeps the clients and the load)",
          "  fanout: closed-loop Acquire throughput with no watchers, then per event view N watchers on the leader and none again",
          "    --in-flight=N        concurrent acquires (default 64)",
          "    --watchers=N         watchers in each watched phase (default 1000)",
          "    --channels=N         client connections the watchers share (default 8)",
          "    --watchers-in=jvm|process|idle-process|capped-process   where the watchers run: in this JVM, sharing its cores and its",
          "                         CPU figures (default); in a child JVM; in a child JVM at the scheduler's idle priority (chrt --idle 0),",
          "                         on cycles the measured JVM leaves; or in a child JVM with cores of its own, as when the watching",
          "                         proxies run on machines of their own: the kernel holds it to --watcher-cores and this JVM (the",
          "                         cluster and its load) to the rest, in every phase alike (CPU control groups; needs root)",
          "    --watcher-cores=F    with capped-process: the watchers' process's share of the machine's cores (default 0.5)",
          "    --writer-loop=own|shared   the acquire load's client event loop: its own thread (default), or the watchers' two, where",
          "                         its replies can wait behind the watchers' messages (how the first runs were set up)",
          "    --fanout-warmup=SECONDS    per phase (default 2)",
          "    --fanout-warmup-rounds=N   discarded watched rounds before the measured phases, to compile the watch paths (default 10:",
          "                               C2 still used 0.4-0.6 cores in the fifth of 7 s rounds)",
          "    --fanout-duration=SECONDS  measured, per phase (default 5)",
          "    --views=full,basic   the event views to watch in, one watched phase each per repeat, in this order (default full,basic);",
          "                         warm-up rounds take them in turn",
          "    --repeats=N          go through --views N times, each watched phase between two no-watcher phases, and pool each",
          "                         view's ratio over its N watched phases (default 5)",
          "  both:",
          "    --drain-timeout=SECONDS  how long to wait for watchers to catch up after the load (default 60)",
          "    --ttl=SECONDS        TTL of every acquired lease (default 1800: nothing expires during a run)",
          "    --election-min-ms=N / --election-max-ms=N   Raft election timeout (defaults 1000 / 1500, the server's)",
          "    --top-threads=N      thread groups listed in the CPU breakdown (default 12; 0: none)",
          "    --watch-senders=N    each node's watch sender threads (default: the server's, half the cores and at least 1)",
          "    --watch-message-rate=N  each node's watch message budget a second (default: the server's, "
              + WatchHub.DEFAULT_MESSAGE_RATE
              + ")",
          "    --watch-max-delay-ms=N  the longest each node's watchers wait for their events (default: the server's, "
              + WatchHub.DEFAULT_MAX_DELAY.toMillis()
              + ")",
          "    --watch-compression=lz4|none  whether the watchers' clients (both runs) accept lz4-block-compressed Watch messages, as the SDK's",
          "                         do (default lz4), or only plain ones, as clients without the codec get",
          "    --jvm-warmup=SECONDS closed-loop Acquire load on each new cluster before anything is measured (default 90: C2 is still compiling three nodes' code after 20 s)",
          "    --profile=DIR        profile every measured period with async-profiler (on the class path) into DIR",
          "    --profile-event=E    cpu (default); wall: wall-clock samples of every thread, running or waiting; alloc: bytes",
          "                         allocated on the heap, by allocating stack (what the collector has to clear)",
          "    --profiler-lib=PATH  libasyncProfiler.so, if not on java.library.path");

  NodeTuning tuning() {
    return new NodeTuning(watchSenders, watchMessageRate, watchMaxDelayMs);
  }

  static Options parse(String[] args) {
    Options o = new Options();
    boolean modeSeen = false;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        System.out.println(USAGE);
        System.exit(0);
      }
      if (!a.startsWith("--")) {
        if (modeSeen) {
          throw new IllegalArgumentException("unexpected argument " + a);
        }
        String m = a.toLowerCase(Locale.ROOT);
        if (!m.equals("latency") && !m.equals("fanout") && !m.equals("all")) {
          throw new IllegalArgumentException("mode must be latency, fanout or all, got " + a);
        }
        o.mode = m;
        modeSeen = true;
        continue;
      }
      String name;
      String value;
      int eq = a.indexOf('=');
      if (eq > 0) {
        name = a.substring(2, eq);
        value = a.substring(eq + 1);
      } else {
        name = a.substring(2);
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("--" + name + " needs a value");
        }
        value = args[++i];
      }
      try {
        set(o, name, value);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--" + name + " must be a number, got '" + value + "'");
      }
    }
    if (o.watcherCoresGiven && o.watchersIn != WatchersIn.CAPPED_PROCESS) {
      throw new IllegalArgumentException(
          "--watcher-cores: only with --watchers-in=capped-process, got --watchers-in="
              + o.watchersIn.option());
    }
    if (o.nodesApart && !o.mode.equals("latency")) {
      throw new IllegalArgumentException(
          "--nodes=process: only for the latency run (mode latency), got mode " + o.mode);
    }
    if (o.snapshotAt != null && o.snapshotAt.compareTo(o.duration) >= 0) {
      throw new IllegalArgumentException(
          "--snapshot-at must fall inside the recorded period (--duration "
              + secs(o.duration)
              + " s), got "
              + secs(o.snapshotAt)
              + " s; give a smaller one, or none");
    }
    return o;
  }

  private static void set(Options o, String name, String value) {
    switch (name) {
      case "rate" -> o.rate = positive(name, Double.parseDouble(value));
      case "warmup" -> o.warmup = seconds(name, value, true);
      case "duration" -> o.duration = seconds(name, value, false);
      case "snapshot-at" -> o.snapshotAt = value.equals("none") ? null : seconds(name, value, true);
      case "nodes" ->
          o.nodesApart =
              switch (value) {
                case "jvm" -> false;
                case "process" -> true;
                default ->
                    throw new IllegalArgumentException(
                        "--nodes: must be jvm or process, got '" + value + "'");
              };
      case "in-flight" -> o.inFlight = (int) positive(name, Integer.parseInt(value));
      case "watchers" -> o.watchers = (int) positive(name, Integer.parseInt(value));
      case "channels" -> o.channels = (int) positive(name, Integer.parseInt(value));
      case "watchers-in" ->
          o.watchersIn =
              switch (value) {
                case "jvm" -> WatchersIn.JVM;
                case "process" -> WatchersIn.PROCESS;
                case "idle-process" -> WatchersIn.IDLE_PROCESS;
                case "capped-process" -> WatchersIn.CAPPED_PROCESS;
                default ->
                    throw new IllegalArgumentException(
                        "--watchers-in: must be jvm, process, idle-process or capped-process, got '"
                            + value
                            + "'");
              };
      case "watcher-cores" -> {
        o.watcherCores = positive(name, Double.parseDouble(value));
        o.watcherCoresGiven = true;
      }
      case "writer-loop" ->
          o.writerSharesWatchersLoop =
              switch (value) {
                case "own" -> false;
                case "shared" -> true;
                default ->
                    throw new IllegalArgumentException(
                        "--writer-loop: must be own or shared, got '" + value + "'");
              };
      case "fanout-warmup" -> o.fanoutWarmup = seconds(name, value, true);
      case "fanout-warmup-rounds" -> {
        o.fanoutWarmupRounds = Integer.parseInt(value);
        if (o.fanoutWarmupRounds < 0) {
          throw new IllegalArgumentException(
              "--fanout-warmup-rounds: must be 0 or more, got " + value);
        }
      }
      case "fanout-duration" -> o.fanoutDuration = seconds(name, value, false);
      case "views" -> o.views = views(value);
      case "repeats" -> o.repeats = (int) positive(name, Integer.parseInt(value));
      case "drain-timeout" -> o.drainTimeout = seconds(name, value, false);
      case "ttl" -> o.ttl = seconds(name, value, false);
      case "election-min-ms" ->
          o.electionMin = Duration.ofMillis((long) positive(name, Long.parseLong(value)));
      case "election-max-ms" ->
          o.electionMax = Duration.ofMillis((long) positive(name, Long.parseLong(value)));
      case "top-threads" -> o.topThreads = Integer.parseInt(value);
      case "watch-senders" -> o.watchSenders = (int) positive(name, Integer.parseInt(value));
      case "watch-message-rate" ->
          o.watchMessageRate = (int) positive(name, Integer.parseInt(value));
      case "watch-max-delay-ms" ->
          o.watchMaxDelayMs = (int) positive(name, Integer.parseInt(value));
      case "watch-compression" ->
          o.watchCompression =
              switch (value) {
                case "lz4" -> true;
                case "none" -> false;
                default ->
                    throw new IllegalArgumentException(
                        "--watch-compression: must be lz4 or none, got '" + value + "'");
              };
      case "jvm-warmup" -> o.jvmWarmup = seconds(name, value, true);
      case "profile" -> o.profileDir = Path.of(value);
      case "profiler-lib" -> o.profilerLib = value;
      case "profile-event" -> {
        if (!value.equals("cpu") && !value.equals("wall") && !value.equals("alloc")) {
          throw new IllegalArgumentException(
              "--profile-event: must be cpu, wall or alloc, got '" + value + "'");
        }
        o.profileEvent = value;
      }
      default -> throw new IllegalArgumentException("unknown option --" + name);
    }
  }

  private static List<EventView> views(String value) {
    List<EventView> views = new ArrayList<>();
    for (String v : value.split(",")) {
      views.add(
          switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "full" -> EventView.EVENT_VIEW_FULL;
            case "basic" -> EventView.EVENT_VIEW_BASIC;
            default ->
                throw new IllegalArgumentException(
                    "--views: each must be full or basic, got '" + v + "'");
          });
    }
    return List.copyOf(views);
  }

  /** The watched phases' views in order: {@link #views}, {@link #repeats} times over. */
  List<EventView> phaseViews() {
    List<EventView> all = new ArrayList<>();
    for (int r = 0; r < repeats; r++) {
      all.addAll(views);
    }
    return List.copyOf(all);
  }

  static String viewName(EventView view) {
    return view == EventView.EVENT_VIEW_BASIC ? "basic" : "full";
  }

  private static double positive(String name, double v) {
    if (!(v > 0)) {
      throw new IllegalArgumentException("--" + name + " must be positive, got " + v);
    }
    return v;
  }

  private static Duration seconds(String name, String value, boolean zeroOk) {
    double s;
    try {
      s = Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "--" + name + " must be a number of seconds, got '" + value + "'");
    }
    if (s < 0 || (!zeroOk && s == 0)) {
      throw new IllegalArgumentException(
          "--"
              + name
              + " must be "
              + (zeroOk ? "non-negative" : "positive")
              + " seconds, got "
              + value);
    }
    return Duration.ofNanos((long) (s * 1e9));
  }

  String describe() {
    return String.format(
        Locale.ROOT,
        "mode=%s rate=%.0f/s warmup=%ss duration=%ss snapshot-at=%s nodes=%s in-flight=%d watchers=%d channels=%d watchers-in=%s writer-loop=%s fanout-warmup=%ss fanout-warmup-rounds=%d fanout-duration=%ss views=%s repeats=%d drain-timeout=%ss ttl=%ss election=%d-%dms jvm-warmup=%ss watch-senders=%s watch-message-rate=%s watch-max-delay=%s watch-compression=%s",
        mode,
        rate,
        secs(warmup),
        secs(duration),
        snapshotAt == null ? "none" : secs(snapshotAt) + "s",
        nodesApart ? "process" : "jvm",
        inFlight,
        watchers,
        channels,
        watchersIn.option()
            + (watchersIn == WatchersIn.CAPPED_PROCESS ? " watcher-cores=" + watcherCores : ""),
        writerSharesWatchersLoop ? "shared" : "own",
        secs(fanoutWarmup),
        fanoutWarmupRounds,
        secs(fanoutDuration),
        String.join(",", views.stream().map(Options::viewName).toList()),
        repeats,
        secs(drainTimeout),
        secs(ttl),
        electionMin.toMillis(),
        electionMax.toMillis(),
        secs(jvmWarmup),
        watchSenders > 0
            ? Integer.toString(watchSenders)
            : "default (" + WatchHub.defaultSenders() + ")",
        watchMessageRate > 0
            ? Integer.toString(watchMessageRate)
            : "default (" + WatchHub.DEFAULT_MESSAGE_RATE + ")",
        watchMaxDelayMs > 0
            ? watchMaxDelayMs + "ms"
            : "default (" + WatchHub.DEFAULT_MAX_DELAY.toMillis() + "ms)",
        watchCompression ? "lz4" : "none");
  }

  private static String secs(Duration d) {
    double s = d.toNanos() / 1e9;
    return s == Math.rint(s) ? Long.toString((long) s) : Double.toString(s);
  }
}
