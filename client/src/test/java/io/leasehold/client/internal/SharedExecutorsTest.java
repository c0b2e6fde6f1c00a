package io.leasehold.client.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.TestCluster;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The JVM's shared SDK pools: one set for every user, and pools that grow to their size, then
 * queue.
 */
class SharedExecutorsTest {
  @Test
  void everyUserGetsTheSameExecutors() {
    SharedExecutors a = SharedExecutors.acquire();
    SharedExecutors b = SharedExecutors.acquire();
    try {
      assertSame(a, b);
      assertSame(a.timer(), b.timer());
    } finally {
      a.release();
      b.release();
    }
  }

  @Test
  void theCallbackPoolGrowsToItsSizeThenQueuesAndRunsEveryTask() throws Exception {
    SharedExecutors shared = SharedExecutors.acquire();
    try {
      ThreadPoolExecutor pool = shared.callbacks();
      int tasks = SharedExecutors.CALLBACK_THREADS + 36;
      CountDownLatch gate = new CountDownLatch(1);
      CountDownLatch done = new CountDownLatch(tasks);
      for (int i = 0; i < tasks; i++) {
        pool.execute(
            () -> {
              try {
                gate.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              done.countDown();
            });
      }
      TestCluster.await(
          () -> "the pool at its size: " + pool,
          Duration.ofSeconds(10),
          () ->
              pool.getPoolSize() == SharedExecutors.CALLBACK_THREADS
                  && pool.getQueue().size() == 36);
      gate.countDown();
      assertTrue(done.await(10, TimeUnit.SECONDS), "every task ran: " + pool);
      assertEquals(SharedExecutors.CALLBACK_THREADS, pool.getLargestPoolSize(), pool.toString());
    } finally {
      shared.release();
    }
  }
}
