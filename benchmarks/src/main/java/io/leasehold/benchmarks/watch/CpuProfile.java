package io.leasehold.benchmarks.watch;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * CPU time per thread group over an interval (threads grouped by name with their numbers blanked:
 * {@code leasehold-watch-3} counts as {@code leasehold-watch-#}), plus the process's total CPU and
 * the machine's load average. Cheap enough to take around every phase; it shows where the cores
 * went without a profiler. Client threads are named {@code bench-*}.
 */
final class CpuProfile {
  private static final Pattern NUMBER = Pattern.compile("(?<=[-_.#])\\d+");
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** JIT compiler CPU (C1 and C2 threads) above which a period's figures are flagged. */
  static final double JIT_WARNING_CORES = 0.1;

  private final long wallNanos;
  private final long processCpuNanos;
  private final Map<Long, Map.Entry<String, Long>> perThread;
  private final String loadAverage;

  /** Every OS thread of the process (Linux /proc): tid -> (comm, CPU ns); empty elsewhere. */
  private final Map<Long, Map.Entry<String, Long>> osThreads;

  /**
   * The scheduler's account of every OS thread (Linux /proc/self/task/N/schedstat); empty
   * elsewhere.
   */
  private final Map<Long, SchedStat> schedStats;

  /**
   * What the kernel's scheduler says of one thread, from its {@code schedstat}: nanoseconds on a
   * core, nanoseconds runnable but waiting for one, and timeslices run (each wake-up starts one).
   */
  record SchedStat(String comm, long runNanos, long waitNanos, long slices) {
    static SchedStat parse(String comm, String schedstat) {
      String[] f = schedstat.trim().split("\\s+");
      return new SchedStat(comm, Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]));
    }
  }

  private CpuProfile(
      long wallNanos,
      long processCpuNanos,
      Map<Long, Map.Entry<String, Long>> perThread,
      String loadAverage,
      Map<Long, Map.Entry<String, Long>> osThreads,
      Map<Long, SchedStat> schedStats) {
    this.wallNanos = wallNanos;
    this.processCpuNanos = processCpuNanos;
    this.perThread = perThread;
    this.loadAverage = loadAverage;
    this.osThreads = osThreads;
    this.schedStats = schedStats;
  }

  static CpuProfile take() {
    if (THREADS.isThreadCpuTimeSupported() && !THREADS.isThreadCpuTimeEnabled()) {
      THREADS.setThreadCpuTimeEnabled(true);
    }
    Map<Long, Map.Entry<String, Long>> per = new HashMap<>();
    // Thread names without stacks: HotSpot answers getThreadInfo without a stack depth with no
    // stop-the-world operation. Thread.getAllStackTraces(), used at first, is one (a
    // "ThreadDump" safepoint): it stopped the latency run's three nodes for 5 ms at the first
    // send of its recorded period and 30 ms at its end (-Xlog:safepoint).
    for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
      if (info == null) {
        continue; // ended since its id was read
      }
      long cpu = THREADS.getThreadCpuTime(info.getThreadId());
      if (cpu >= 0) {
        per.put(info.getThreadId(), Map.entry(info.getThreadName(), cpu));
      }
    }
    Map<Long, SchedStat> sched = new HashMap<>();
    return new CpuProfile(
        System.nanoTime(), processCpu(), per, readLoadAverage(), osThreads(sched), sched);
  }

  String loadAverage() {
    return loadAverage;
  }

  double wallSecondsSince(CpuProfile before) {
    return (wallNanos - before.wallNanos) / 1e9;
  }

  /** The top groups by CPU between {@code before} and this profile, as printable lines. */
  List<String> since(CpuProfile before, int top) {
    Map<String, Long> groups = new HashMap<>();
    for (Map.Entry<Long, Map.Entry<String, Long>> e : perThread.entrySet()) {
      Map.Entry<String, Long> then = before.perThread.get(e.getKey());
      long delta = e.getValue().getValue() - (then == null ? 0 : then.getValue());
      groups.merge(group(e.getValue().getKey()), delta, Long::sum);
    }
    double wall = (wallNanos - before.wallNanos) / 1e9;
    double process = (processCpuNanos - before.processCpuNanos) / 1e9;
    ArrayList<String> lines = new ArrayList<>();
    lines.add(
        String.format(
            Locale.ROOT,
            "process CPU %.1f s over %.1f s wall = %.2f cores (machine has %d); load average before: %s, after: %s",
            process,
            wall,
            process / wall,
            Runtime.getRuntime().availableProcessors(),
            before.loadAverage,
            loadAverage));
    long javaTotal = groups.values().stream().mapToLong(Long::longValue).sum();
    groups.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .limit(top)
        .forEach(
            g ->
                lines.add(
                    String.format(
                        Locale.ROOT,
                        "  %6.2f cores  %5.1f%%  %s",
                        g.getValue() / 1e9 / wall,
                        process > 0 ? 100.0 * g.getValue() / 1e9 / process : 0.0,
                        g.getKey())));
    lines.add(
        String.format(
            Locale.ROOT,
            "  %6.2f cores  %5.1f%%  (all live Java threads together)",
            javaTotal / 1e9 / wall,
            process > 0 ? 100.0 * javaTotal / 1e9 / process : 0.0));
    if (!osThreads.isEmpty()) {
      // Threads the JVM does not list (JIT compilers, GC, RocksDB's native threads) and threads
      // that
      // started and ended within the interval, from /proc (names cut to 15 characters by the OS).
      Set<String> javaNames = new HashSet<>();
      perThread.values().forEach(e -> javaNames.add(osName(e.getKey())));
      before.perThread.values().forEach(e -> javaNames.add(osName(e.getKey())));
      Map<String, Long> others = new HashMap<>();
      long osTotal = 0;
      for (Map.Entry<Long, Map.Entry<String, Long>> e : osThreads.entrySet()) {
        Map.Entry<String, Long> then = before.osThreads.get(e.getKey());
        long delta = e.getValue().getValue() - (then == null ? 0 : then.getValue());
        osTotal += delta;
        if (!javaNames.contains(e.getValue().getKey())) {
          others.merge(group(e.getValue().getKey()), delta, Long::sum);
        }
      }
      double compilerCores = jitCoresSince(before);
      if (compilerCores > JIT_WARNING_CORES) {
        // Seen on a slow machine: C2 still recompiling 2-3 minutes in, and latencies 3-5x those of
        // a warmed-up run of the same code. Such figures say nothing about a change.
        lines.add(
            String.format(
                Locale.ROOT,
                "  WARNING: the JIT compilers used %.2f cores in this period: the JVM is not warmed up "
                    + "(raise --jvm-warmup, and --warmup or --fanout-warmup-rounds); do not compare these figures with a warmed-up run",
                compilerCores));
      }
      long exited = Math.max(0, processCpuNanos - before.processCpuNanos - osTotal);
      others.put("(threads that exited during the interval)", exited);
      lines.add("  not Java-listed (JVM-internal, native, or exited):");
      others.entrySet().stream()
          .filter(g -> g.getValue() > 0)
          .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
          .limit(Math.max(3, top / 2))
          .forEach(
              g ->
                  lines.add(
                      String.format(
                          Locale.ROOT,
                          "  %6.2f cores  %5.1f%%  %s",
                          g.getValue() / 1e9 / wall,
                          process > 0 ? 100.0 * g.getValue() / 1e9 / process : 0.0,
                          g.getKey())));
    }
    lines.addAll(schedulerSince(before, wall, Math.max(3, top / 2)));
    return lines;
  }

  /**
   * The run queue over the interval: how often the process's threads were woken (timeslices) and
   * how long, in all, they were runnable but waited for a core. On two loaded cores that wait is a
   * large part of any latency that crosses threads: each hand-off pays it. The top groups by
   * wake-ups follow (OS names, cut to 15 characters). Empty where there is no schedstat.
   */
  List<String> schedulerSince(CpuProfile before, double wall, int top) {
    if (schedStats.isEmpty() || wall <= 0) {
      return List.of();
    }
    long slices = 0;
    long waitNanos = 0;
    Map<String, long[]> groups = new HashMap<>();
    for (Map.Entry<Long, SchedStat> e : schedStats.entrySet()) {
      SchedStat now = e.getValue();
      SchedStat then = before.schedStats.get(e.getKey());
      long s = now.slices() - (then == null ? 0 : then.slices());
      long w = now.waitNanos() - (then == null ? 0 : then.waitNanos());
      slices += s;
      waitNanos += w;
      long[] g = groups.computeIfAbsent(group(now.comm()), k -> new long[2]);
      g[0] += s;
      g[1] += w;
    }
    List<String> lines = new ArrayList<>();
    lines.add(
        String.format(
            Locale.ROOT,
            "  scheduler: %.0f wake-ups (timeslices) a second; on average %.1f threads were runnable "
                + "and waiting for a core, %.3f ms a wake-up; by wake-ups:",
            slices / wall,
            waitNanos / 1e9 / wall,
            slices > 0 ? waitNanos / 1e6 / slices : 0.0));
    groups.entrySet().stream()
        .sorted((a, b) -> Long.compare(b.getValue()[0], a.getValue()[0]))
        .limit(top)
        .forEach(
            g ->
                lines.add(
                    String.format(
                        Locale.ROOT,
                        "  %8.0f/s  waited %.3f ms a wake-up  %s",
                        g.getValue()[0] / wall,
                        g.getValue()[0] > 0 ? g.getValue()[1] / 1e6 / g.getValue()[0] : 0.0,
                        g.getKey())));
    return lines;
  }

  /** The whole process's CPU over the interval, in cores. */
  double processCoresSince(CpuProfile before) {
    return (processCpuNanos - before.processCpuNanos)
        / (double) Math.max(1, wallNanos - before.wallNanos);
  }

  /**
   * Cores the JIT compiler threads (C1 and C2, which the JVM does not list) used between {@code
   * before} and this profile; 0 where there is no /proc.
   */
  double jitCoresSince(CpuProfile before) {
    return coresSince(before, name -> name.contains("CompilerThre"));
  }

  /**
   * Cores G1's concurrent marking threads ({@code G1 Conc#n}, {@code G1 Main Marker}) used since
   * {@code before}.
   */
  double markingCoresSince(CpuProfile before) {
    return coresSince(
        before, name -> name.startsWith("G1 Conc") || name.startsWith("G1 Main Marker"));
  }

  /** Cores the Java threads whose names start with {@code prefix} used since {@code before}. */
  double javaCoresSince(CpuProfile before, String prefix) {
    return cpuNanos(perThread, before.perThread, name -> name.startsWith(prefix))
        / 1e9
        / wallSecondsSince(before);
  }

  /**
   * Cores the OS threads whose names {@code match} used since {@code before} (Linux; 0 elsewhere).
   */
  private double coresSince(CpuProfile before, Predicate<String> match) {
    return cpuNanos(osThreads, before.osThreads, match) / 1e9 / wallSecondsSince(before);
  }

  /**
   * CPU ns the threads of {@code now} (tid to name and CPU ns) whose names {@code match} used since
   * {@code then}.
   */
  private static long cpuNanos(
      Map<Long, Map.Entry<String, Long>> now,
      Map<Long, Map.Entry<String, Long>> then,
      Predicate<String> match) {
    long nanos = 0;
    for (Map.Entry<Long, Map.Entry<String, Long>> e : now.entrySet()) {
      if (match.test(e.getValue().getKey())) {
        Map.Entry<String, Long> earlier = then.get(e.getKey());
        nanos += e.getValue().getValue() - (earlier == null ? 0 : earlier.getValue());
      }
    }
    return nanos;
  }

  /** The name Linux shows for a Java thread: its first 15 bytes. */
  private static String osName(String javaName) {
    return javaName.length() <= 15 ? javaName : javaName.substring(0, 15);
  }

  /**
   * Linux: every thread of this process with its user+system CPU time, and into {@code sched} its
   * scheduler statistics where the kernel keeps them; empty where there is no /proc.
   */
  private static Map<Long, Map.Entry<String, Long>> osThreads(Map<Long, SchedStat> sched) {
    Map<Long, Map.Entry<String, Long>> out = new HashMap<>();
    Path tasks = Path.of("/proc/self/task");
    if (!Files.isDirectory(tasks)) {
      return out;
    }
    long nanosPerTick = 10_000_000L; // USER_HZ is 100 on Linux
    try (Stream<Path> list = Files.list(tasks)) {
      for (Path t : (Iterable<Path>) list::iterator) {
        try {
          String stat = Files.readString(t.resolve("stat"));
          int open = stat.indexOf('(');
          int close = stat.lastIndexOf(')');
          String comm = stat.substring(open + 1, close);
          String[] f = stat.substring(close + 2).split(" ");
          // after "(comm) ": state is f[0]; utime and stime are fields 14 and 15 of stat, f[11] and
          // f[12].
          long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
          long tid = Long.parseLong(t.getFileName().toString());
          out.put(tid, Map.entry(comm, ticks * nanosPerTick));
          Path schedstat = t.resolve("schedstat");
          if (Files.isReadable(schedstat)) {
            sched.put(tid, SchedStat.parse(comm, Files.readString(schedstat)));
          }
        } catch (Exception gone) {
          // The thread ended while we looked.
        }
      }
    } catch (Exception e) {
      return out;
    }
    return out;
  }

  static String group(String threadName) {
    return NUMBER.matcher(threadName).replaceAll("#");
  }

  private static long processCpu() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return 0;
  }

  private static String readLoadAverage() {
    try {
      String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return parts[0] + " " + parts[1] + " " + parts[2];
    } catch (Exception e) {
      return String.format(
          Locale.ROOT, "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
  }
}
