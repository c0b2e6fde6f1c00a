package io.leasehold.benchmarks.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.EventView;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.server.LeaseholdNode;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fan-out's watchers in a child JVM, driven over its standard input and output. */
class WatcherProcessTest {
  @Test
  void aTallyCrossesTheProcessBoundaryUnchanged() {
    WatcherFleet.Tally t =
        new WatcherFleet.Tally(
            1000,
            990,
            1,
            9,
            Map.of("CANCELLED", 2, "RESOURCE_EXHAUSTED", 7),
            "RESOURCE_EXHAUSTED: watcher fell more than 10000 events behind",
            41,
            3,
            5,
            123_456,
            9_876_543_210L,
            7_000_000,
            2_345_678_901L);
    assertEquals(t, WatcherProcess.decodeTally(WatcherProcess.encodeTally(t).split(" ")));
    WatcherFleet.Tally clean =
        new WatcherFleet.Tally(3, 3, 0, 0, Map.of(), null, 5, 0, 0, 4, 400, 15, 120);
    assertEquals(clean, WatcherProcess.decodeTally(WatcherProcess.encodeTally(clean).split(" ")));
  }

  @Test
  void aChildProcessWatchesARealNodeAndEndsWithItsInput() throws Exception {
    try (BenchCluster cluster =
        BenchCluster.start(
            1, Duration.ofMillis(300), Duration.ofMillis(600), NodeTuning.DEFAULTS)) {
      LeaseholdNode node = cluster.awaitReadyLeader(Duration.ofSeconds(30));
      WatcherProcess child = WatcherProcess.start(node.clientAddress(), 2, false, true, null);
      ProcessHandle handle;
      try {
        assertEquals("in a child process", child.where());
        handle = ProcessHandle.of(child.pid()).orElseThrow();
        child.open(
            3,
            WatchRequest.newBuilder()
                .setPrefix(LatencyBenchmark.PREFIX)
                .setView(EventView.EVENT_VIEW_BASIC)
                .build());
        BenchCluster.await(
            "the hub to count the child's 3 watchers",
            Duration.ofSeconds(30),
            () -> node.watchHub().watchers() == 3);
        ManagedChannel channel = cluster.channel(node);
        LeasesGrpc.LeasesBlockingStub leases = LeasesGrpc.newBlockingStub(channel);
        for (int i = 0; i < 5; i++) {
          assertEquals(
              Outcome.GRANTED,
              leases
                  .acquire(
                      AcquireRequest.newBuilder()
                          .setName(LatencyBenchmark.PREFIX + i)
                          .setHolder("t")
                          .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(60))
                          .build())
                  .getOutcome());
        }
        assertTrue(
            child.awaitAll(5, Duration.ofSeconds(30)), "every watcher saw the 5 acquisitions");
        WatcherFleet.Tally t = child.tally(5);
        assertEquals(3, t.watchers());
        assertEquals(3, t.complete(), t.toString());
        assertEquals(0, t.failed(), t.toString());
        assertEquals(15, t.events(), "each of the 3 watchers counted 5 ACQUIRED events");
        assertTrue(
            t.wireBytes() >= t.bytes() && t.bytes() > 0,
            "small messages go uncompressed, so the wire carries at least their bytes: "
                + t.wireBytes()
                + " against "
                + t.bytes());
        assertEquals(new WatcherFleet.Seen(5, 15), child.seen());
        assertFalse(
            child.awaitAll(6, Duration.ofMillis(200)), "no watcher saw a sixth acquisition");
        assertTrue(child.cpuSeconds() > 0, "the child's CPU is read from the OS");
        child.cancel();
        BenchCluster.await(
            "the hub to drop the cancelled watchers",
            Duration.ofSeconds(30),
            () -> node.watchHub().watchers() == 0);
      } finally {
        child.close();
      }
      assertTrue(handle.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS) != null);
      assertFalse(handle.isAlive(), "the child ends when its input closes");
    }
  }
}
