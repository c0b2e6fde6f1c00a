package io.leasehold.benchmarks.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CpuSplitTest {
  private static final String V1_MOUNTS =
      String.join(
          "\n",
          "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
          "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct",
          "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset",
          "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
          "");
  private static final String V2_MOUNTS =
      String.join(
          "\n",
          "22 1 0:20 / / rw - overlay overlay rw",
          "30 22 0:26 /kubepods/pod1 /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw,nsdelegate",
          "");

  @Test
  void findsTheV1CpuHierarchyAndThisProcesssGroupInIt() {
    CpuSplit.Controller c =
        CpuSplit.locate(V1_MOUNTS, "5:cpuset:/\n3:cpu,cpuacct:/jobs/bench\n0::/\n");
    assertEquals(
        new CpuSplit.Controller(Path.of("/sys/fs/cgroup/cpu,cpuacct"), false, "/jobs/bench"), c);
    assertEquals(Path.of("/sys/fs/cgroup/cpu,cpuacct/jobs/bench"), c.ownDir());
    // The cpuset hierarchy's name starts like cpu's; only a controller named exactly "cpu" counts.
    assertNull(
        CpuSplit.locate(
            "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n", "5:cpuset:/\n"));
  }

  @Test
  void findsV2WhereThereIsNoV1CpuHierarchyAndTakesTheGroupRelativeToTheMountsRoot() {
    CpuSplit.Controller c = CpuSplit.locate(V2_MOUNTS, "0::/kubepods/pod1/bench\n");
    assertEquals(new CpuSplit.Controller(Path.of("/sys/fs/cgroup"), true, "/bench"), c);
    assertEquals(Path.of("/sys/fs/cgroup/bench"), c.ownDir());
    assertEquals(
        Path.of("/sys/fs/cgroup"), CpuSplit.locate(V2_MOUNTS, "0::/kubepods/pod1\n").ownDir());
    assertNull(
        CpuSplit.locate("22 1 0:20 / / rw - overlay overlay rw\n", "0::/\n"),
        "no controller mounted");
  }

  @Test
  void throttlingIsReportedAsTheShareOfPeriodsTheGroupRanIn() {
    CpuSplit.Throttling before = new CpuSplit.Throttling(100, 10);
    assertEquals("25%", new CpuSplit.Throttling(300, 60).since(before).percent());
    assertEquals("no period (it had nothing to run)", before.since(before).percent());
  }

  @Test
  void refusesAShareThatLeavesTheClusterNoCoreNamingTheOption() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> CpuSplit.create(2.0, 2));
    assertEquals(
        "--watcher-cores: must be more than 0 and less than this machine's 2 cores, got 2.0",
        e.getMessage());
  }

  /**
   * On a machine where this test runs as root with a writable CPU controller (the reference
   * machine's kind is one): two real groups with the asked quotas, a process moved into each, and
   * nothing left behind.
   */
  @Test
  void createsBothGroupsWithTheirQuotasMovesProcessesInAndRemovesThemAfter() throws Exception {
    CpuSplit split;
    try {
      split = CpuSplit.create(0.5, 2);
    } catch (IllegalStateException noControlGroups) {
      assumeTrue(
          false, "no writable CPU controller here (needs root): " + noControlGroups.getMessage());
      return;
    }
    Process a = new ProcessBuilder("sleep", "60").start();
    Process b = new ProcessBuilder("sleep", "60").start();
    Path watchers;
    Path cluster;
    try (split) {
      split.moveToWatchers(a.pid());
      split.moveToCluster(b.pid());
      watchers = groupOf(a.pid());
      cluster = groupOf(b.pid());
      assertTrue(watchers.getFileName().toString().endsWith("-watchers"), watchers.toString());
      assertTrue(cluster.getFileName().toString().endsWith("-cluster"), cluster.toString());
      assertEquals(10_000, quotaMicros(watchers), "0.5 cores of a 20 ms period");
      assertEquals(30_000, quotaMicros(cluster), "the other 1.5 cores");
      assertEquals(
          0, split.watcherThrottling().throttled(), "a sleeping process never uses up its quota");
    } finally {
      a.destroy();
      b.destroy();
      a.waitFor(10, TimeUnit.SECONDS);
      b.waitFor(10, TimeUnit.SECONDS);
    }
    assertFalse(Files.exists(watchers), "removed on close: " + watchers);
    assertFalse(Files.exists(cluster), "removed on close: " + cluster);
  }

  /**
   * The directory of the group {@code pid} is in, in the controller {@link CpuSplit#locate} finds.
   */
  private static Path groupOf(long pid) throws Exception {
    CpuSplit.Controller c =
        CpuSplit.locate(
            Files.readString(Path.of("/proc/self/mountinfo")),
            Files.readString(Path.of("/proc/" + pid + "/cgroup")));
    return c.ownDir();
  }

  private static long quotaMicros(Path group) throws Exception {
    Path v2 = group.resolve("cpu.max");
    if (Files.exists(v2)) {
      return Long.parseLong(Files.readString(v2).trim().split(" ")[0]);
    }
    return Long.parseLong(Files.readString(group.resolve("cpu.cfs_quota_us")).trim());
  }
}
