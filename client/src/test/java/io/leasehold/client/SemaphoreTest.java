package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.recipes.Semaphore;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The semaphore recipe on a three-node cluster: never more than K holders, waiters served as
 * permits free up.
 */
class SemaphoreTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = Fixtures.stableThreeNodes(dir);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  /** A permit's validity as its holder saw it: from the grant's arrival to the release call. */
  record Held(String slot, long token, long start, long end) {}

  @Test
  void manyClientsRacingForKPermitsNeverExceedK() throws Exception {
    int k = 2;
    List<Held> held = new CopyOnWriteArrayList<>();
    List<LeaseholdClient> clients = new ArrayList<>();
    try {
      List<CompletableFuture<Void>> workers = new ArrayList<>();
      for (int c = 0; c < 6; c++) {
        LeaseholdClient client = Fixtures.client(cluster, b -> b);
        clients.add(client);
        Semaphore pool = client.semaphore("semaphore/race", k);
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int round = 0; round < 3; round++) {
          // Each holder keeps its permit over a round trip (it checks the cluster still has it), so
          // a (K+1)th holder would overlap with the others.
          chain =
              chain
                  .thenCompose(v -> pool.acquire())
                  .thenCompose(
                      permit -> {
                        long start = System.nanoTime();
                        return client
                            .get(permit.name())
                            .thenCompose(
                                info -> {
                                  assertEquals(
                                      permit.token(),
                                      info.orElseThrow().token(),
                                      "the cluster has the permit");
                                  assertTrue(permit.isValid());
                                  held.add(
                                      new Held(
                                          permit.name(), permit.token(), start, System.nanoTime()));
                                  return pool.release(permit);
                                });
                      });
        }
        workers.add(chain);
      }
      CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    } finally {
      clients.forEach(LeaseholdClient::close);
    }
    assertEquals(18, held.size());
    // Sweep over every start and end: never more than k permits valid at once.
    List<long[]> points = new ArrayList<>();
    for (Held h : held) {
      points.add(new long[] {h.start(), 1});
      points.add(new long[] {h.end(), -1});
    }
    points.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
    int now = 0;
    for (long[] p : points) {
      now += (int) p[1];
      assertTrue(now <= k, "more than " + k + " permits valid at once: " + held);
    }
    for (Held h : held) {
      assertTrue(
          h.slot().equals("semaphore/race/slot-0") || h.slot().equals("semaphore/race/slot-1"),
          h.toString());
      for (Held later : held) {
        if (later.slot().equals(h.slot()) && later.start() > h.end()) {
          assertTrue(
              later.token() > h.token(),
              "a slot's next holder has a larger token: " + h + ", " + later);
        }
      }
    }
  }

  @Test
  void aWaitingAcquirerGetsAPermitWhenOneIsReleased() throws Exception {
    try (LeaseholdClient a = Fixtures.client(cluster);
        LeaseholdClient b = Fixtures.client(cluster);
        LeaseholdClient c = Fixtures.client(cluster)) {
      Lease pa = a.semaphore("semaphore/wait", 2).acquire().get(20, TimeUnit.SECONDS);
      Lease pb = b.semaphore("semaphore/wait", 2).acquire().get(20, TimeUnit.SECONDS);
      assertFalse(pa.name().equals(pb.name()));
      Semaphore pool = c.semaphore("semaphore/wait", 2);
      assertEquals(
          Optional.empty(),
          pool.tryAcquire(Duration.ofMillis(300)).get(20, TimeUnit.SECONDS),
          "both permits are held");
      CompletableFuture<Lease> waiting = pool.acquire();
      assertFalse(waiting.isDone());
      b.semaphore("semaphore/wait", 2).release(pb).get(20, TimeUnit.SECONDS);
      Lease pc = waiting.get(20, TimeUnit.SECONDS);
      assertEquals(pb.name(), pc.name());
      assertTrue(pc.token() > pb.token());
      assertTrue(pa.isValid());
    }
  }

  @Test
  void aClientWithAnotherPermitCountIsRefused() throws Exception {
    try (LeaseholdClient a = Fixtures.client(cluster);
        LeaseholdClient b = Fixtures.client(cluster)) {
      a.semaphore("semaphore/mismatch", 3).acquire().get(20, TimeUnit.SECONDS);
      ExecutionException e =
          assertThrows(
              ExecutionException.class,
              () -> b.semaphore("semaphore/mismatch", 2).acquire().get(20, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof IllegalStateException, e.toString());
    }
  }
}
