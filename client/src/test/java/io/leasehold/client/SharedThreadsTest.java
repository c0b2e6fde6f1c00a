package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.leasehold.client.internal.SharedExecutors;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The clients of one process share the SDK's threads, and one client's close does not starve the
 * others.
 */
class SharedThreadsTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(1, dir);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  /** Live SDK threads by pool ({@code leasehold-timer-3} counts as {@code leasehold-timer}). */
  private static Map<String, Integer> sdkThreads() {
    Map<String, Integer> pools = new HashMap<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      String name = t.getName();
      if (t.isAlive() && name.startsWith("leasehold-") && name.matches(".*-\\d+")) {
        pools.merge(name.substring(0, name.lastIndexOf('-')), 1, Integer::sum);
      }
    }
    return pools;
  }

  @Test
  void twentyClientsInOneProcessUseTheSharedThreadsAndNoneOfTheirOwn() throws Exception {
    List<LeaseholdClient> clients = new ArrayList<>();
    try {
      List<CompletableFuture<Lease>> leases = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        LeaseholdClient c = Fixtures.client(cluster, b -> b);
        clients.add(c);
        leases.add(c.acquire("shared/threads-" + i, Fixtures.ttl(30)));
      }
      CompletableFuture.allOf(leases.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      Map<String, Integer> pools = sdkThreads();
      assertTrue(pools.getOrDefault("leasehold-timer", 0) <= 2, pools.toString());
      assertTrue(pools.getOrDefault("leasehold-internal", 0) <= 8, pools.toString());
      assertTrue(pools.getOrDefault("leasehold-callback", 0) <= 64, pools.toString());
      // Nothing per client: every SDK thread belongs to one of the shared pools.
      for (String pool : pools.keySet()) {
        assertTrue(
            List.of(
                    "leasehold-timer",
                    "leasehold-internal",
                    "leasehold-callback",
                    "leasehold-action")
                .contains(pool),
            pools.toString());
      }
    } finally {
      clients.forEach(LeaseholdClient::close);
    }
  }

  @Test
  void theSharedThreadsStopWhenTheLastClientCloses() throws Exception {
    assumeTrue(SharedExecutors.users() == 0, "another client of this JVM is open");
    LeaseholdClient first = Fixtures.client(cluster, b -> b);
    LeaseholdClient second = Fixtures.client(cluster, b -> b);
    Lease kept;
    try {
      first.blocking().acquire("shared/stop-1", Fixtures.ttl(30));
      kept = second.blocking().acquire("shared/stop-2", Fixtures.ttl(3));
      assertEquals(2, SharedExecutors.users());
      first.close();
      assertEquals(1, SharedExecutors.users());
      // The other client's lease is still renewed on the shared threads (a 3 s TTL, so two renewals
      // in 4 s).
      long closedAt = System.nanoTime();
      Fixtures.await(
          "4 s after the first close",
          Duration.ofSeconds(30),
          () -> System.nanoTime() - closedAt >= TimeUnit.SECONDS.toNanos(4));
      assertTrue(kept.isValid(), kept.toString());
    } finally {
      first.close();
      second.close();
    }
    assertEquals(0, SharedExecutors.users());
    Fixtures.await(
        () -> "no SDK thread left: " + sdkThreads(),
        Duration.ofSeconds(10),
        () ->
            sdkThreads().keySet().stream()
                .noneMatch(
                    p ->
                        p.equals("leasehold-timer")
                            || p.equals("leasehold-internal")
                            || p.equals("leasehold-callback")));
  }

  @Test
  void closingClientsWithManyLeasesLetNoLeaseOfTheOthersLapse() throws Exception {
    List<LeaseholdClient> closing = new ArrayList<>();
    List<LeaseholdClient> staying = new ArrayList<>();
    ExecutorService closers = Executors.newFixedThreadPool(3);
    try {
      for (int i = 0; i < 3; i++) {
        LeaseholdClient c = Fixtures.client(cluster, b -> b.holder("closing-" + System.nanoTime()));
        closing.add(c);
        KeepAliveTest.acquireMany(c, "many/" + c.holder() + "/", 1500, Duration.ofSeconds(60));
      }
      // Short TTLs: a renewal about every 1.3 s, so a keep-alive held up for long would show.
      Duration ttl = Duration.ofSeconds(4);
      Map<Lease, TransitionRecorder> survivors = new HashMap<>();
      for (int i = 0; i < 3; i++) {
        LeaseholdClient c = Fixtures.client(cluster, b -> b.holder("staying-" + System.nanoTime()));
        staying.add(c);
        for (Lease l : KeepAliveTest.acquireMany(c, "few/" + c.holder() + "/", 30, ttl)) {
          TransitionRecorder r = new TransitionRecorder();
          l.addListener(r);
          survivors.put(l, r);
        }
      }

      List<CompletableFuture<Void>> closes = new ArrayList<>();
      for (LeaseholdClient c : closing) {
        closes.add(CompletableFuture.runAsync(c::close, closers));
      }
      CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      long closedAt = System.nanoTime();
      Fixtures.await(
          "a TTL after the closes",
          Duration.ofSeconds(30),
          () -> System.nanoTime() - closedAt >= ttl.toNanos());

      for (LeaseholdClient c : closing) {
        assertEquals(
            List.of(),
            staying.get(0).blocking().listHeldBy(c.holder(), "").leases(),
            c.holder() + " released everything");
      }
      for (Map.Entry<Lease, TransitionRecorder> e : survivors.entrySet()) {
        // JEOPARDY may come of a slow round on a loaded machine; losing a lease may not.
        assertFalse(
            e.getValue().saw(LeaseState.LOST),
            e.getKey().name() + ": " + e.getValue().transitions());
        assertTrue(e.getKey().isValid(), e.getKey().toString());
      }
      for (LeaseholdClient c : staying) {
        assertEquals(
            30,
            c.blocking().listHeldBy(c.holder(), "").leases().size(),
            c.holder() + " still holds its leases");
      }
    } finally {
      closers.shutdownNow();
      closing.forEach(LeaseholdClient::close);
      staying.forEach(LeaseholdClient::close);
    }
  }
}
