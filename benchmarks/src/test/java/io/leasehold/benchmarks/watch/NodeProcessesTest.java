package io.leasehold.benchmarks.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The latency run's nodes one JVM each, driven over their standard input and output. */
class NodeProcessesTest {
  @Test
  void commitTimesCrossTheProcessBoundaryUnchanged(@TempDir Path dir) throws Exception {
    CommitTimes times = new CommitTimes(100, 10);
    times.committed(90, 103, 5_000); // before the window's base: only 101-103 are kept
    times.committed(103, 120, 7_000); // past its end: only 104-109
    Path file = dir.resolve("commits");
    times.writeTo(file);
    CommitTimes read = CommitTimes.readFrom(file);
    assertEquals(100, read.base());
    assertEquals(10, read.length());
    assertEquals(9, read.reported());
    assertEquals(0, read.at(100));
    assertEquals(5_000, read.at(101));
    assertEquals(5_000, read.at(103));
    assertEquals(7_000, read.at(104));
    assertEquals(7_000, read.at(109));
    assertEquals(0, read.at(110));
  }

  /**
   * Three child JVMs form a cluster; the leader's commit times, taken in its process, fall between
   * this JVM's send and reply of each write (the two share the machine's monotonic clock); the
   * children end when their input closes and the temp directory goes with them.
   */
  @Test
  void threeChildJvmsFormAClusterWhoseCommitTimesShareThisJvmsClock() throws Exception {
    NodeProcesses cluster =
        NodeProcesses.start(3, Duration.ofMillis(300), Duration.ofMillis(600), NodeTuning.DEFAULTS);
    Path dir = cluster.baseDir();
    List<ProcessHandle> children =
        cluster.pids().stream().map(pid -> ProcessHandle.of(pid).orElseThrow()).toList();
    try {
      assertEquals(3, children.size());
      assertEquals("one JVM per node", cluster.where());
      LatencyCluster.Node leader = cluster.awaitReadyLeader(Duration.ofSeconds(30));
      LatencyCluster.Node follower = cluster.follower();
      assertFalse(follower.isLeader());
      assertTrue(
          leader.inThisJvm().isEmpty() && follower.inThisJvm().isEmpty(),
          "no node runs in this JVM");
      cluster.markPeriod();
      long base = leader.commitIndex();
      leader.recordCommits(base, 1000);
      LeasesGrpc.LeasesBlockingStub leases =
          LeasesGrpc.newBlockingStub(cluster.writerChannel(leader, false));
      long[] sent = new long[5];
      long[] replied = new long[5];
      long[] revision = new long[5];
      for (int i = 0; i < 5; i++) {
        sent[i] = System.nanoTime();
        AcquireResponse r =
            leases.acquire(
                AcquireRequest.newBuilder()
                    .setName(LatencyBenchmark.PREFIX + i)
                    .setHolder("t")
                    .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(60))
                    .build());
        replied[i] = System.nanoTime();
        assertEquals(Outcome.GRANTED, r.getOutcome());
        revision[i] = r.getRevision();
      }
      CommitTimes times = leader.commitTimes();
      assertEquals(base, times.base());
      for (int i = 0; i < 5; i++) {
        long committed = times.at(revision[i]);
        assertTrue(
            committed > sent[i] && committed < replied[i],
            "write "
                + i
                + " at revision "
                + revision[i]
                + " was found committed at "
                + committed
                + ", not between its send "
                + sent[i]
                + " and its reply "
                + replied[i]);
      }
      BenchCluster.await(
          "the follower to apply the writes",
          Duration.ofSeconds(30),
          () -> follower.appliedIndex() >= revision[4]);
      LatencyCluster.PeriodReport report = cluster.periodReport(3);
      assertEquals(
          3,
          report.lines().stream().filter(l -> l.matches("node n\\d's process:")).count(),
          report.lines().toString());
      assertEquals(
          3,
          report.lines().stream().filter(l -> l.trim().startsWith("GC pauses:")).count(),
          report.lines().toString());
      assertTrue(report.cores() > 0, "the nodes' CPU is read in their processes");
    } finally {
      cluster.close();
    }
    for (ProcessHandle child : children) {
      child.onExit().get(30, TimeUnit.SECONDS);
      assertFalse(child.isAlive(), "each child ends when its input closes");
    }
    assertFalse(Files.exists(dir), "the cluster's temp directory is deleted");
  }
}
