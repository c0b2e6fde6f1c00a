package io.leasehold.benchmarks.watch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Gives the fan-out's watcher process and the measured JVM (the three nodes and the acquire load)
 * cores of their own on one machine, with the kernel's CPU bandwidth control ({@code
 * --watchers-in=capped-process}): each goes into a control group of its own, the watchers' held to
 * {@code watcherCores} cores and the measured JVM's to the rest of the machine's.
 *
 * <p>In a deployment the proxies that watch a node run on machines of their own; (B) asks what
 * serving them costs the node. With everything on two cores their clients' work (0.1–0.2 cores)
 * came out of the cluster's CPU in the watched phases only, and was counted as the node's cost. The
 * scheduler's idle priority did not keep it out; a quota does: in every phase, watched or not, the
 * cluster has the same cores, and what the watchers cost the node is all that differs. The watchers
 * must still keep up on theirs: one that falls behind is cut off by the server, and the phase
 * fails.
 *
 * <p>Needs a writable CPU controller: cgroup v1's {@code cpu} hierarchy, or cgroup v2 with the
 * {@code cpu} controller enabled for children of this process's group (both need root).
 */
final class CpuSplit implements AutoCloseable {
  /**
   * The quota's accounting period. The kernel's default of 100 ms lets two cores spend a 1.5-core
   * quota in the first 75 ms and then stall every thread of the group for 25 ms; at 20 ms the
   * stalls are a fifth as long.
   */
  static final long PERIOD_MICROS = 20_000;

  /** A CPU controller mounted at {@code mount}, version 1 or 2, and this process's group in it. */
  record Controller(Path mount, boolean v2, String ownGroup) {
    Path ownDir() {
      return ownGroup.equals("/") ? mount : mount.resolve(ownGroup.substring(1));
    }
  }

  /**
   * One group's counters from {@code cpu.stat}: periods with runnable threads, and those throttled.
   */
  record Throttling(long periods, long throttled) {
    Throttling since(Throttling before) {
      return new Throttling(periods - before.periods, throttled - before.throttled);
    }

    /** The share of periods in which the group used up its quota, as a percentage. */
    String percent() {
      // The kernel counts only periods in which the group had a thread to run.
      return periods == 0
          ? "no period (it had nothing to run)"
          : String.format(Locale.ROOT, "%.0f%%", 100.0 * throttled / periods);
    }
  }

  private final Controller controller;
  private final Path cluster;
  private final Path watchers;
  private final double clusterCores;
  private final double watcherCores;

  private CpuSplit(
      Controller controller,
      Path cluster,
      Path watchers,
      double clusterCores,
      double watcherCores) {
    this.controller = controller;
    this.cluster = cluster;
    this.watchers = watchers;
    this.clusterCores = clusterCores;
    this.watcherCores = watcherCores;
  }

  /**
   * Creates the two groups, the watchers' with a quota of {@code watcherCores} and the cluster's
   * with {@code cpus - watcherCores}; nothing is moved into them yet.
   */
  static CpuSplit create(double watcherCores, int cpus) {
    if (!(watcherCores > 0) || watcherCores >= cpus) {
      throw new IllegalArgumentException(
          String.format(
              Locale.ROOT,
              "--watcher-cores: must be more than 0 and less than this machine's %d cores, got %s",
              cpus,
              watcherCores));
    }
    Controller c;
    try {
      c =
          locate(
              Files.readString(Path.of("/proc/self/mountinfo")),
              Files.readString(Path.of("/proc/self/cgroup")));
    } catch (IOException e) {
      throw new IllegalStateException(
          "--watchers-in=capped-process: cannot read /proc/self/mountinfo or /proc/self/cgroup: "
              + e,
          e);
    }
    if (c == null) {
      throw new IllegalStateException(
          "--watchers-in=capped-process needs the kernel's CPU controller (cgroup v1 'cpu' or cgroup v2), "
              + "and /proc/self/mountinfo shows neither mounted");
    }
    String tag = "leasehold-bench-" + ProcessHandle.current().pid();
    Path cluster = c.ownDir().resolve(tag + "-cluster");
    Path watchers = c.ownDir().resolve(tag + "-watchers");
    double clusterCores = cpus - watcherCores;
    try {
      Files.createDirectory(cluster);
      Files.createDirectory(watchers);
      quota(c, cluster, clusterCores);
      quota(c, watchers, watcherCores);
    } catch (IOException e) {
      removeQuietly(cluster);
      removeQuietly(watchers);
      throw new IllegalStateException(
          "--watchers-in=capped-process: cannot set up CPU control groups under "
              + c.ownDir()
              + " (it needs root, and with cgroup v2 the cpu controller enabled in that group's cgroup.subtree_control): "
              + e,
          e);
    }
    return new CpuSplit(c, cluster, watchers, clusterCores, watcherCores);
  }

  /**
   * The CPU controller's mount and this process's group in it, from the text of {@code
   * /proc/self/mountinfo} and {@code /proc/self/cgroup}; null if there is none. cgroup v1's {@code
   * cpu} hierarchy is preferred where both are mounted (v2 then usually holds no controller).
   */
  static Controller locate(String mountinfo, String procCgroup) {
    Path v1 = null;
    String v1Root = null;
    Path v2 = null;
    String v2Root = null;
    for (String line : mountinfo.split("\n")) {
      // "36 25 0:31 /root /mount/point opts [optional fields] - fstype source superopts"
      String[] halves = line.split(" - ", 2);
      if (halves.length < 2) {
        continue;
      }
      String[] left = halves[0].split(" ");
      String[] right = halves[1].split(" ");
      if (left.length < 5 || right.length < 1) {
        continue;
      }
      String root = left[3];
      Path point = Path.of(unescape(left[4]));
      if (right[0].equals("cgroup")
          && right.length >= 3
          && List.of(right[2].split(",")).contains("cpu")) {
        v1 = point;
        v1Root = root;
      } else if (right[0].equals("cgroup2") && v2 == null) {
        v2 = point;
        v2Root = root;
      }
    }
    for (String line : procCgroup.split("\n")) {
      // "4:cpu,cpuacct:/some/group" (v1) or "0::/some/group" (v2)
      String[] f = line.split(":", 3);
      if (f.length < 3) {
        continue;
      }
      if (v1 != null && List.of(f[1].split(",")).contains("cpu")) {
        return new Controller(v1, false, relative(f[2], v1Root));
      }
    }
    if (v2 != null) {
      for (String line : procCgroup.split("\n")) {
        String[] f = line.split(":", 3);
        if (f.length == 3 && f[0].equals("0") && f[1].isEmpty()) {
          return new Controller(v2, true, relative(f[2], v2Root));
        }
      }
    }
    return null;
  }

  /**
   * A group's path as /proc/self/cgroup gives it, made relative to the mount's root within the
   * hierarchy.
   */
  private static String relative(String group, String mountRoot) {
    if (mountRoot == null || mountRoot.equals("/")) {
      return group;
    }
    if (group.equals(mountRoot)) {
      return "/";
    }
    return group.startsWith(mountRoot + "/") ? group.substring(mountRoot.length()) : group;
  }

  /** mountinfo escapes space, tab, newline and backslash as octal. */
  private static String unescape(String s) {
    return s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\");
  }

  private static void quota(Controller c, Path group, double cores) throws IOException {
    long quota = Math.round(cores * PERIOD_MICROS);
    if (c.v2()) {
      write(group.resolve("cpu.max"), quota + " " + PERIOD_MICROS);
    } else {
      write(group.resolve("cpu.cfs_period_us"), Long.toString(PERIOD_MICROS));
      write(group.resolve("cpu.cfs_quota_us"), Long.toString(quota));
    }
  }

  private static void write(Path file, String value) throws IOException {
    Files.writeString(file, value, StandardCharsets.US_ASCII);
  }

  /** Moves the process {@code pid} (all its threads) into the cluster's group. */
  void moveToCluster(long pid) {
    move(cluster, pid);
  }

  /** Moves the process {@code pid} (all its threads) into the watchers' group. */
  void moveToWatchers(long pid) {
    move(watchers, pid);
  }

  private void move(Path group, long pid) {
    try {
      write(group.resolve("cgroup.procs"), Long.toString(pid));
    } catch (IOException e) {
      throw new UncheckedIOException("moving process " + pid + " into " + group, e);
    }
  }

  double clusterCores() {
    return clusterCores;
  }

  double watcherCores() {
    return watcherCores;
  }

  Throttling clusterThrottling() {
    return throttling(cluster);
  }

  Throttling watcherThrottling() {
    return throttling(watchers);
  }

  private static Throttling throttling(Path group) {
    long periods = 0;
    long throttled = 0;
    try {
      for (String line : Files.readAllLines(group.resolve("cpu.stat"))) {
        String[] f = line.split(" ");
        if (f.length == 2 && f[0].equals("nr_periods")) {
          periods = Long.parseLong(f[1]);
        } else if (f.length == 2 && f[0].equals("nr_throttled")) {
          throttled = Long.parseLong(f[1]);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading " + group.resolve("cpu.stat"), e);
    }
    return new Throttling(periods, throttled);
  }

  /** Where the groups are, for the report. */
  String describe() {
    return String.format(
        Locale.ROOT,
        "this JVM (the cluster and its load) held to %.2f cores and the watchers' process to %.2f "
            + "(cgroup %s quotas per %d ms, in %s)",
        clusterCores,
        watcherCores,
        controller.v2() ? "v2" : "v1",
        PERIOD_MICROS / 1000,
        controller.ownDir());
  }

  /**
   * Moves every process still in either group back to this process's own group (the watchers' has
   * normally exited by now), then removes both.
   */
  @Override
  public void close() {
    Path home = controller.ownDir().resolve("cgroup.procs");
    for (Path group : List.of(watchers, cluster)) {
      try {
        for (String pid : Files.readAllLines(group.resolve("cgroup.procs"))) {
          if (!pid.isBlank()) {
            try {
              write(home, pid.trim());
            } catch (IOException gone) {
              // The process exited meanwhile.
            }
          }
        }
      } catch (IOException e) {
        // Already gone.
      }
      removeQuietly(group);
    }
  }

  /** rmdir: a control group's directory is removed empty, whatever files the kernel shows in it. */
  private static void removeQuietly(Path group) {
    for (int attempt = 0; attempt < 50; attempt++) {
      try {
        Files.deleteIfExists(group);
        return;
      } catch (IOException e) {
        // EBUSY while a process just moved out is still being accounted: try again shortly.
        try {
          Thread.sleep(20);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
    System.err.println(
        "could not remove the control group " + group + "; remove it with: rmdir " + group);
  }
}
