package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One keep-alive loop per client: batched renewals, and leases that survive a leader change. */
class KeepAliveTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aThousandLeasesStayAliveForThreeTtlsWithAtMostThreeRenewCallsPerTtl() throws Exception {
    cluster = Fixtures.stableThreeNodes(dir);
    CallCounter calls = new CallCounter();
    // Short, but with room for a leader change on a loaded machine: a renewal every ~1.7 s.
    Duration ttl = Duration.ofSeconds(5);
    try (LeaseholdClient client = Fixtures.client(cluster, b -> b.interceptor(calls))) {
      List<Lease> leases = acquireMany(client, "job/", 1000, ttl);
      List<TransitionRecorder> recorders = new ArrayList<>();
      for (Lease l : leases) {
        TransitionRecorder r = new TransitionRecorder();
        l.addListener(r);
        recorders.add(r);
      }
      // One renewal round brings leases acquired at different times into step; count from then.
      int before = calls.succeeded("Renew");
      Fixtures.await(
          "a renewal round", Duration.ofSeconds(10), () -> calls.succeeded("Renew") > before + 1);
      int start = calls.succeeded("Renew");
      int startAll = calls.count("Renew");
      long startNanos = System.nanoTime();
      long window = ttl.multipliedBy(3).toNanos();
      Fixtures.await(
          "three TTLs", Duration.ofSeconds(30), () -> System.nanoTime() - startNanos >= window);
      int renewCalls = calls.succeeded("Renew") - start;
      int retried = calls.count("Renew") - startAll - renewCalls;

      // Retries of a failed round (a node that was slow or changing leader) are extra calls; the
      // successful ones are what the loop costs.
      assertTrue(
          renewCalls <= 3 * 3 + 1,
          "at most ~3 Renew calls per TTL for 1000 leases, got "
              + renewCalls
              + " in 3 TTLs (and "
              + retried
              + " failed attempts)");
      assertTrue(renewCalls >= 6, "the leases were renewed: " + renewCalls + " calls");
      for (int i = 0; i < leases.size(); i++) {
        assertTrue(leases.get(i).isValid(), leases.get(i) + " is valid");
        // JEOPARDY is allowed (a slow round on a loaded machine); losing a lease is not.
        assertFalse(
            recorders.get(i).saw(LeaseState.LOST),
            leases.get(i).name() + ": " + recorders.get(i).transitions());
      }
      Map<String, Long> stored = new HashMap<>();
      client.blocking().list("job/").leases().forEach(l -> stored.put(l.name(), l.token()));
      assertEquals(1000, stored.size());
      for (Lease l : leases) {
        assertEquals(
            l.token(),
            stored.get(l.name()),
            "the cluster still holds " + l.name() + " with its token");
      }
    }
  }

  @Test
  void killingTheLeaderLosesNoLeaseWhoseTtlOutlastsTheFailover() throws Exception {
    cluster = Fixtures.stableThreeNodes(dir);
    LeaseholdNode leader = cluster.awaitLeader();
    // The client's home node is the leader: both its renewals and its reads must fail over.
    try (LeaseholdClient client =
        Fixtures.client(Fixtures.endpoints(cluster, leader.id()), b -> b)) {
      // Failover takes an election timeout (at most 1.9 s here) plus a commit: 8 s leaves room on a
      // loaded machine.
      List<Lease> leases = acquireMany(client, "runner/", 20, Duration.ofSeconds(8));
      List<TransitionRecorder> recorders = new ArrayList<>();
      for (Lease l : leases) {
        TransitionRecorder r = new TransitionRecorder();
        l.addListener(r);
        recorders.add(r);
      }
      long killed = System.nanoTime();
      cluster.stopNode(leader.id());
      LeaseholdNode next = cluster.awaitLeader();
      long failover = System.nanoTime() - killed;
      // Ride through the failover and then more than a full TTL under the new leader.
      Fixtures.await(
          "1.5 TTLs after the kill",
          Duration.ofSeconds(30),
          () -> System.nanoTime() - killed >= TimeUnit.SECONDS.toNanos(12));
      for (int i = 0; i < leases.size(); i++) {
        Lease l = leases.get(i);
        assertFalse(
            recorders.get(i).saw(LeaseState.LOST),
            l.name()
                + " was lost: "
                + recorders.get(i).transitions()
                + " (failover took "
                + failover / 1_000_000
                + " ms)");
        assertTrue(l.isValid(), l + " is valid");
      }
      for (Lease l : leases) {
        assertEquals(
            l.token(),
            cluster
                .leases(next.id())
                .get(io.leasehold.server.Requests.get(l.name()))
                .getLease()
                .getToken());
      }
    }
  }

  static List<Lease> acquireMany(LeaseholdClient client, String prefix, int count, Duration ttl)
      throws Exception {
    Semaphore inFlight = new Semaphore(64);
    List<CompletableFuture<Lease>> all = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      inFlight.acquire();
      CompletableFuture<Lease> f = client.acquire(prefix + i, LeaseOptions.defaults().withTtl(ttl));
      f.whenComplete((l, e) -> inFlight.release());
      all.add(f);
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    List<Lease> leases = new ArrayList<>();
    for (CompletableFuture<Lease> f : all) {
      leases.add(f.get());
    }
    return leases;
  }
}
