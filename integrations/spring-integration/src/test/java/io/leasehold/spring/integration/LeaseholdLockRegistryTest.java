package io.leasehold.spring.integration;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.EndReason;
import io.leasehold.client.EndedLease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import io.leasehold.testkit.LeaseholdCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The registry's locks as Spring's registries are tested: reentrancy, waiting, ownership,
 * exclusion, expiry.
 */
class LeaseholdLockRegistryTest {
  static LeaseholdCluster cluster;

  LeaseholdClient clientA;
  LeaseholdClient clientB;
  LeaseholdLockRegistry a;
  LeaseholdLockRegistry b;

  @BeforeAll
  static void start() throws Exception {
    cluster = LeaseholdCluster.start(3);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  @BeforeEach
  void clients() {
    clientA = client().build();
    clientB = client().build();
    a = new LeaseholdLockRegistry(clientA);
    b = new LeaseholdLockRegistry(clientB);
  }

  @AfterEach
  void closeClients() {
    clientA.close();
    clientB.close();
  }

  @Test
  void theOwningThreadReentersAndTheLastUnlockReleasesTheLease() throws Exception {
    LeaseholdLock lock = a.obtain("reentrant");
    lock.lock();
    long token = lock.token();
    lock.lockInterruptibly();
    assertTrue(lock.tryLock());
    assertTrue(lock.tryLock(1, TimeUnit.SECONDS));
    assertEquals(token, lock.token(), "re-entries share the lease");

    lock.unlock();
    lock.unlock();
    lock.unlock();
    assertEquals(token, lease("reentrant").orElseThrow().token(), "held until the last unlock");
    assertFalse(b.obtain("reentrant").tryLock());

    lock.unlock();
    assertTrue(lease("reentrant").isEmpty(), "released by the last unlock");
    assertFalse(lock.isHeldByCurrentThread());
    assertThrows(IllegalStateException.class, lock::unlock);
  }

  @Test
  void tryLockWithATimeoutWaitsForTheNameAndGetsItWhenReleased() throws Exception {
    LeaseholdLock held = b.obtain("waited");
    held.lock();
    long first = held.token();

    CompletableFuture<Long> waiter = new CompletableFuture<>();
    Thread thread =
        new Thread(
            () -> {
              LeaseholdLock lock = a.obtain("waited");
              try {
                if (lock.tryLock(20, TimeUnit.SECONDS)) {
                  long token = lock.token();
                  lock.unlock();
                  waiter.complete(token);
                } else {
                  waiter.complete(-1L);
                }
              } catch (Throwable e) {
                waiter.completeExceptionally(e);
              }
            });
    thread.start();
    await("the waiter holds the local lock")
        .atMost(Duration.ofSeconds(10))
        .pollInSameThread()
        .ignoreExceptions()
        .until(() -> a.obtain("waited").isAcquiredInThisProcess());
    assertFalse(waiter.isDone());

    held.unlock();
    long second = waiter.get(20, TimeUnit.SECONDS);
    assertTrue(
        second > first,
        "the waiter got the name with a larger token: " + second + " after " + first);
  }

  @Test
  void tryLockWithATimeoutGivesUpWhenTheNameStaysTaken() throws Exception {
    LeaseholdLock held = b.obtain("taken");
    held.lock();
    LeaseholdLock lock = a.obtain("taken");
    long start = System.nanoTime();
    assertFalse(lock.tryLock(400, TimeUnit.MILLISECONDS));
    assertTrue(
        System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(400), "waited the whole time");
    assertFalse(lock.isAcquiredInThisProcess(), "a failed try leaves no local hold");
    held.unlock();
    assertTrue(lock.tryLock(10, TimeUnit.SECONDS));
    lock.unlock();
  }

  @Test
  void unlockByAThreadThatDoesNotHoldTheLockIsRefused() throws Exception {
    LeaseholdLock lock = a.obtain("owned");
    CountDownLatch locked = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    AtomicReference<Throwable> ownerFailure = new AtomicReference<>();
    Thread owner =
        new Thread(
            () -> {
              try {
                lock.lock();
                locked.countDown();
                done.await();
                lock.unlock();
              } catch (Throwable e) {
                ownerFailure.set(e);
              }
            });
    owner.start();
    assertTrue(locked.await(20, TimeUnit.SECONDS));

    assertThrows(IllegalStateException.class, lock::unlock);
    assertThrows(IllegalStateException.class, lock::token);
    assertFalse(lock.tryLock(), "another thread of the process waits its turn");
    assertTrue(lease("owned").isPresent(), "the refused unlock left the lease alone");

    done.countDown();
    owner.join(20_000);
    assertEquals(null, ownerFailure.get());
    assertTrue(lease("owned").isEmpty());
  }

  @Test
  void twoRegistriesOnTwoClientsExcludeEachOther() throws Exception {
    LeaseholdLock lockA = a.obtain("shared");
    lockA.lock();
    assertFalse(b.obtain("shared").tryLock());
    assertFalse(b.obtain("shared").tryLock(200, TimeUnit.MILLISECONDS));
    lockA.unlock();

    int rounds = 5;
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    int[] counter = {0};
    List<Future<?>> workers = new ArrayList<>();
    List<Long> tokens = new CopyOnWriteArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      for (int t = 0; t < 4; t++) {
        LeaseholdLockRegistry registry = t % 2 == 0 ? a : b;
        workers.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < rounds; i++) {
                    LeaseholdLock lock = registry.obtain("shared");
                    lock.lock();
                    try {
                      if (inside.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                      }
                      tokens.add(lock.token());
                      counter[0] = counter[0] + 1;
                      inside.decrementAndGet();
                    } finally {
                      lock.unlock();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> w : workers) {
        w.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(0, overlaps.get());
    assertEquals(4 * rounds, counter[0]);
    for (int i = 1; i < tokens.size(); i++) {
      assertTrue(
          tokens.get(i) > tokens.get(i - 1),
          "each holder's token is larger than the one before: " + tokens);
    }
  }

  @Test
  void aLockWhoseLeaseIsRevokedReportsItAtUnlockAndTheNameGoesToOthers() throws Exception {
    LeaseholdLock lock = a.obtain("revoked");
    lock.lock();
    long token = lock.token();
    clientB.admin().revoke(a.leaseName("revoked"), "test", token).join();
    await("the holder sees its lease lost")
        .atMost(Duration.ofSeconds(15))
        .pollInSameThread()
        .ignoreExceptions()
        .until(() -> !lock.isValid());
    assertTrue(lock.isHeldByCurrentThread(), "still held locally until unlocked");

    LeaseholdLock other = b.obtain("revoked");
    assertTrue(other.tryLock(15, TimeUnit.SECONDS));
    assertTrue(other.token() > token);

    assertThrows(ConcurrentModificationException.class, lock::unlock);
    assertFalse(lock.isAcquiredInThisProcess(), "the lock is free here after the report");
    assertEquals(
        other.token(),
        lease("revoked").orElseThrow().token(),
        "the late unlock released nothing of the next holder's");
    other.unlock();
  }

  @Test
  void aLockExpiresOnTheClusterWhenItsProcessStopsRenewing() throws Exception {
    LeaseholdClient stopping = client().releaseOnClose(false).build();
    LeaseholdLockRegistry registry =
        LeaseholdLockRegistry.builder(stopping).ttl(Duration.ofSeconds(2)).build();
    LeaseholdLock lock = registry.obtain("expiring");
    lock.lock();
    long token = lock.token();
    assertEquals(Duration.ofSeconds(2), lease("expiring").orElseThrow().ttl());
    stopping.close(); // stops renewing without releasing, as a crashed process would

    assertTrue(lease("expiring").isPresent(), "held until its TTL runs out");
    LeaseholdLock other = b.obtain("expiring");
    assertTrue(other.tryLock(20, TimeUnit.SECONDS), "free once the lease expired");
    assertTrue(other.token() > token);
    EndedLease ended = clientB.admin().history(a.leaseName("expiring"), 1).join().get(0);
    assertEquals(token, ended.token());
    assertEquals(EndReason.EXPIRED, ended.reason());

    assertThrows(ConcurrentModificationException.class, lock::unlock);
    other.unlock();
  }

  @Test
  void aReentryAfterTheLeaseWasLostTakesTheNameAgainWithANewToken() throws Exception {
    LeaseholdLock lock = a.obtain("retaken");
    lock.lock();
    long token = lock.token();
    clientB.admin().revoke(a.leaseName("retaken"), "test", token).join();
    await("the holder sees its lease lost")
        .atMost(Duration.ofSeconds(15))
        .pollInSameThread()
        .ignoreExceptions()
        .until(() -> !lock.isValid());

    assertTrue(lock.tryLock(15, TimeUnit.SECONDS));
    assertTrue(lock.isValid());
    assertTrue(lock.token() > token);
    lock.unlock();
    lock.unlock(); // the hold count was kept: no report, the new lease is released
    assertTrue(lease("retaken").isEmpty());
  }

  @Test
  void lockInterruptiblyStopsWaitingWhenInterruptedAndLeavesNothingHeld() throws Exception {
    LeaseholdLock held = b.obtain("interrupted");
    held.lock();
    LeaseholdLock lock = a.obtain("interrupted");
    CompletableFuture<Throwable> outcome = new CompletableFuture<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                lock.lockInterruptibly();
                outcome.complete(null);
              } catch (Throwable e) {
                outcome.complete(e);
              }
            });
    waiter.start();
    await("the waiter holds the local lock")
        .atMost(Duration.ofSeconds(10))
        .pollInSameThread()
        .ignoreExceptions()
        .until(lock::isAcquiredInThisProcess);
    waiter.interrupt();
    assertTrue(outcome.get(20, TimeUnit.SECONDS) instanceof InterruptedException);
    assertFalse(lock.isAcquiredInThisProcess());

    held.unlock();
    assertTrue(lock.tryLock(10, TimeUnit.SECONDS), "the abandoned wait left the name free");
    lock.unlock();
  }

  @Test
  void aDistributedLockTtlGivesTheLeaseItsOwnTtl() throws Exception {
    LeaseholdLock lock = a.obtain("ttl");
    lock.lock(Duration.ofSeconds(7));
    LeaseInfo info = lease("ttl").orElseThrow();
    assertEquals(Duration.ofSeconds(7), info.ttl());
    assertEquals(0, info.session());
    lock.unlock();

    assertTrue(lock.tryLock(Duration.ofSeconds(5), Duration.ofSeconds(9)));
    assertEquals(Duration.ofSeconds(9), lease("ttl").orElseThrow().ttl());
    lock.unlock();

    lock.lock();
    assertTrue(
        lease("ttl").orElseThrow().session() != 0,
        "without a TTL the lease lives with the client's session");
    lock.unlock();
  }

  @Test
  void expiringUnusedLocksForgetsOnlyThoseNotHeld() {
    LeaseholdLock held = a.obtain("kept");
    LeaseholdLock idle = a.obtain("forgotten");
    held.lock();
    a.expireUnusedOlderThan(0);
    assertSame(held, a.obtain("kept"));
    assertNotSame(idle, a.obtain("forgotten"));
    held.unlock();
  }

  @Test
  void keysMustBeStringsAndPrefixesNamespaces() {
    assertThrows(IllegalArgumentException.class, () -> a.obtain(42));
    assertThrows(
        IllegalArgumentException.class,
        () -> LeaseholdLockRegistry.builder(clientA).prefix("no-namespace"));
    assertEquals(
        "orders/lock-7",
        LeaseholdLockRegistry.builder(clientA).prefix("orders/lock-").build().leaseName("7"));
  }

  @Test
  void executeLockedRunsUnderTheLockAndTimesOutWhenTaken() throws Exception {
    AtomicReference<Boolean> heldInside = new AtomicReference<>();
    a.executeLocked("executed", () -> heldInside.set(lease("executed").isPresent()));
    assertTrue(heldInside.get());
    assertTrue(lease("executed").isEmpty());

    LeaseholdLock held = b.obtain("executed");
    held.lock();
    assertThrows(
        TimeoutException.class,
        () -> a.executeLocked("executed", Duration.ofMillis(300), () -> heldInside.set(false)));
    held.unlock();
  }

  private Optional<LeaseInfo> lease(String key) {
    return clientB.get(a.leaseName(key)).join();
  }

  private static LeaseholdClientBuilder client() {
    return LeaseholdClient.builder()
        .endpoints(cluster.addresses())
        .requestTimeout(Duration.ofSeconds(20))
        .attemptTimeout(Duration.ofSeconds(3));
  }
}
