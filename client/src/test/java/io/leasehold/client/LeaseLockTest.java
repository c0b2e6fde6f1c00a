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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** LeaseLock as a java.util.concurrent.locks.Lock across processes, and withLease. */
class LeaseLockTest {
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
  void waitersInSeveralClientsGetTheNameInTheOrderTheyAsked() throws Exception {
    String name = "lock/fair-order";
    List<LeaseholdClient> clients = new ArrayList<>();
    try {
      for (int i = 0; i < 5; i++) {
        clients.add(Fixtures.client(cluster));
      }
      Lease held = clients.get(0).acquire(name, ttl(30)).get(20, TimeUnit.SECONDS);
      io.leasehold.server.LeaseholdNode leader = cluster.awaitLeader();
      List<CompletableFuture<Lease>> waiters = new ArrayList<>();
      for (int i = 1; i < clients.size(); i++) {
        int queued = leader.waitingAcquires();
        CompletableFuture<Lease> f = clients.get(i).acquire(name, ttl(30));
        waiters.add(f);
        // The SDK sends its writes to the leader, which queues the call while the name is held.
        TestCluster.await(
            "client " + i + " is queued on the leader",
            Duration.ofSeconds(10),
            () -> leader.waitingAcquires() > queued || f.isDone());
        assertFalse(f.isDone(), "client " + i + " waits while the name is held");
      }
      long token = held.token();
      for (int i = 0; i < waiters.size(); i++) {
        held.release().get(20, TimeUnit.SECONDS);
        held = waiters.get(i).get(20, TimeUnit.SECONDS);
        assertTrue(held.token() > token, "tokens increase with each hand-over");
        token = held.token();
        for (int j = i + 1; j < waiters.size(); j++) {
          assertFalse(
              waiters.get(j).isDone(),
              "client " + (j + 1) + " is not served before client " + (i + 1) + " releases");
        }
      }
      held.release().get(20, TimeUnit.SECONDS);
    } finally {
      clients.forEach(LeaseholdClient::close);
    }
  }

  @Test
  void eightThreadsInTwoClientsNeverHoldTheLockAtOnce() throws Exception {
    int rounds = 5;
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    List<Long> tokens = new CopyOnWriteArrayList<>();
    FencingGuard guard = new FencingGuard();
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    try (LeaseholdClient a = Fixtures.client(cluster);
        LeaseholdClient b = Fixtures.client(cluster)) {
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        LeaseholdClient client = t % 2 == 0 ? a : b;
        Thread thread =
            new Thread(
                () -> {
                  LeaseLock lock = client.lock("lock/contended", ttl(10));
                  try {
                    go.await();
                    for (int i = 0; i < rounds; i++) {
                      lock.lock();
                      try {
                        if (inside.incrementAndGet() != 1) {
                          overlaps.incrementAndGet();
                        }
                        assertTrue(lock.isValid());
                        long token = lock.token();
                        // Every holder writes with its token; none may be older than one already
                        // written.
                        guard.check("resource", token);
                        tokens.add(token);
                        Thread.yield();
                        inside.decrementAndGet();
                      } finally {
                        lock.unlock();
                      }
                    }
                  } catch (Throwable e) {
                    failures.add(e);
                  }
                },
                "locker-" + t);
        thread.start();
        threads.add(thread);
      }
      go.countDown();
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(60));
        assertFalse(t.isAlive(), t.getName() + " finished");
      }
    }
    assertEquals(List.of(), failures);
    assertEquals(0, overlaps.get(), "no two threads were inside at once");
    assertEquals(8 * rounds, tokens.size());
    for (int i = 1; i < tokens.size(); i++) {
      assertTrue(
          tokens.get(i) > tokens.get(i - 1), "each holder got a larger token than the one before");
    }
  }

  @Test
  void theLockIsReentrantForItsThreadAndTheTokenStays() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      LeaseLock lock = client.lock("lock/reentrant", ttl(10));
      lock.lock();
      long token = lock.token();
      assertTrue(lock.tryLock());
      lock.lockInterruptibly();
      assertEquals(token, lock.token());
      lock.unlock();
      lock.unlock();
      assertTrue(lock.isHeldByCurrentThread());
      assertTrue(client.blocking().checkToken("lock/reentrant", token));
      lock.unlock();
      assertFalse(lock.isHeldByCurrentThread());
      assertFalse(
          client.blocking().checkToken("lock/reentrant", token),
          "the last unlock released the lease");
    }
  }

  @Test
  void tryLockWithATimeoutGivesUpWhileAnotherClientHoldsIt() throws Exception {
    try (LeaseholdClient a = Fixtures.client(cluster);
        LeaseholdClient b = Fixtures.client(cluster)) {
      LeaseLock held = a.lock("lock/timeout", ttl(10));
      assertTrue(held.tryLock());
      LeaseLock wanted = b.lock("lock/timeout", ttl(10));
      assertFalse(wanted.tryLock());
      long start = System.nanoTime();
      assertFalse(wanted.tryLock(300, TimeUnit.MILLISECONDS));
      assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300));
      held.unlock();
      assertTrue(wanted.tryLock(10, TimeUnit.SECONDS));
      wanted.unlock();
    }
  }

  @Test
  void aThreadInterruptedWhileWaitingForTheLockStopsWaitingAndHoldsNothing() throws Exception {
    try (LeaseholdClient a = Fixtures.client(cluster);
        LeaseholdClient b = Fixtures.client(cluster)) {
      LeaseLock held = a.lock("lock/interrupt", ttl(10));
      held.lock();
      CompletableFuture<Throwable> outcome = new CompletableFuture<>();
      LeaseLock wanted = b.lock("lock/interrupt", ttl(10));
      Thread waiter =
          new Thread(
              () -> {
                try {
                  wanted.lockInterruptibly();
                  outcome.complete(null);
                } catch (Throwable e) {
                  outcome.complete(e);
                }
              });
      waiter.start();
      Fixtures.await(
          "the waiter waits",
          Duration.ofSeconds(5),
          () -> waiter.getState() == Thread.State.WAITING);
      waiter.interrupt();
      assertTrue(outcome.get(10, TimeUnit.SECONDS) instanceof InterruptedException);
      held.unlock();
      // The abandoned wait left nothing behind: the name is free. Its first attempt may still have
      // been on its way when the waiter was interrupted (the thread waits as soon as it is sent);
      // on a loaded machine the leader can apply it after the unlock and grant it, and the SDK then
      // gives that lease back itself, a moment later (a try of the same client waits for that; see
      // AcquireTest). So: free within 3 s, well inside the 10 s TTL, which a leaked lease would
      // hold.
      Fixtures.await(
          "the name to be free again",
          Duration.ofSeconds(3),
          () -> b.blocking().tryAcquire("lock/interrupt").isGranted());
    }
  }

  @Test
  void withLeaseRunsTheActionAndReleasesTheLease() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      String result =
          client
              .blocking()
              .withLease(
                  "lock/with",
                  ttl(10),
                  lease -> {
                    assertTrue(lease.isValid());
                    return "done with token " + lease.token();
                  });
      assertTrue(result.startsWith("done with token "));
      assertTrue(client.blocking().get("lock/with").isEmpty(), "released after the action");
      Integer async = client.withLease("lock/with", ttl(10), lease -> 42).get(10, TimeUnit.SECONDS);
      assertEquals(42, async);
      Fixtures.await(
          "released after the async action",
          Duration.ofSeconds(5),
          () -> client.blocking().get("lock/with").isEmpty());
    }
  }

  @Test
  void withLeaseInterruptsTheActionWhenTheLeaseIsLost() throws Exception {
    Partition pause = new Partition();
    try (LeaseholdClient client = Fixtures.client(cluster, b -> b.interceptor(pause))) {
      CountDownLatch started = new CountDownLatch(1);
      CompletableFuture<String> run =
          client.withLease(
              "lock/interrupted",
              ttl(2),
              lease -> {
                started.countDown();
                Thread.sleep(TimeUnit.SECONDS.toMillis(30)); // works until interrupted
                return "finished";
              });
      assertTrue(started.await(10, TimeUnit.SECONDS));
      pause.cut();
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> run.get(10, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof LeaseLostException, e.getCause().toString());
      assertTrue(
          e.getCause().getCause() instanceof InterruptedException,
          "the action was interrupted: " + e.getCause().getCause());
      pause.heal();
    }
  }
}
