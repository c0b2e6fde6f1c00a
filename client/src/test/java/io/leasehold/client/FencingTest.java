package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Fencing tokens end to end: a resource refuses a writer whose lease ended without it noticing. */
class FencingTest {
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

  @Test
  void fencingGuardRejectsTheStaleTokenOfAClientThatLostItsLease() throws Exception {
    FencingGuard guard = new FencingGuard();
    List<String> mailbox = new ArrayList<>();
    Partition pause = new Partition();
    try (LeaseholdClient stale = Fixtures.client(cluster, b -> b.interceptor(pause));
        LeaseholdClient fresh = Fixtures.client(cluster)) {
      Lease old = stale.blocking().acquire("mailbox/42", ttl(2));
      guard.guard("mailbox/42", old.token(), () -> mailbox.add("from the first holder"));

      // The first holder stops (a long GC pause): its lease expires and the name moves on.
      pause.cut();
      Lease current =
          fresh.blocking().acquire("mailbox/42", ttl(10).withWait(Duration.ofSeconds(30)));
      assertTrue(current.token() > old.token());
      guard.guard("mailbox/42", current.token(), () -> mailbox.add("from the second holder"));

      // The first holder wakes up and writes without looking at its lease: refused.
      StaleTokenException e =
          assertThrows(
              StaleTokenException.class,
              () -> guard.guard("mailbox/42", old.token(), () -> mailbox.add("stale write")));
      assertEquals(current.token(), e.highest());
      assertFalse(guard.tryAdvance("mailbox/42", old.token()));
      assertEquals(List.of("from the first holder", "from the second holder"), mailbox);

      // The cluster agrees.
      assertFalse(fresh.blocking().checkToken("mailbox/42", old.token()));
      assertTrue(fresh.blocking().checkToken("mailbox/42", current.token()));
      pause.heal();
      Fixtures.await(
          "the old handle is LOST", Duration.ofSeconds(5), () -> old.state() == LeaseState.LOST);
    }
  }

  @Test
  void checkTokenIsFalseOnceTheLeaseIsReleased() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Lease lease = client.blocking().acquire("mailbox/7", ttl(10));
      assertTrue(client.blocking().checkToken("mailbox/7", lease.token()));
      lease.release().get();
      assertFalse(client.blocking().checkToken("mailbox/7", lease.token()));
      CompletableFuture<Boolean> never = client.checkToken("mailbox/never", 1);
      assertFalse(never.get(10, TimeUnit.SECONDS));
    }
  }
}
