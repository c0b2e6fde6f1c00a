package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The node's limits against abuse, at their defaults, leave ordinary SDK use alone. */
class DefaultLimitsTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void burstsOfAcquisitionsKeepAliveAndManyWatchesPassAtTheDefaults() throws Exception {
    cluster = TestCluster.start(1, dir);
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      AtomicInteger events = new AtomicInteger();
      List<Watch> watches = new ArrayList<>();
      // More watches on the client's one connection than the benchmarks' 125 a connection.
      for (int i = 0; i < 150; i++) {
        watches.add(client.watch("sdk/", 0, e -> events.incrementAndGet()));
      }
      Fixtures.await(
          "every watch is open",
          Duration.ofSeconds(30),
          () -> cluster.node("n1").requestLimits().openWatches() == 150);
      List<CompletableFuture<Lease>> acquired = new ArrayList<>();
      for (int i = 0; i < 500; i++) {
        acquired.add(client.acquire("sdk/" + i, ttl(30)));
      }
      CompletableFuture.allOf(acquired.toArray(CompletableFuture[]::new)).join();
      for (CompletableFuture<Lease> f : acquired) {
        assertEquals(true, f.join() != null);
      }
      // 75,000 events to stream: a busy two-core machine took more than 30 s for them.
      Fixtures.await(
          () -> "every watch saw every grant (" + events.get() + " of " + 150 * 500 + ")",
          Duration.ofSeconds(120),
          () -> events.get() >= 150 * 500);
      watches.forEach(Watch::close);
      Fixtures.await(
          "closed watches free their slots",
          Duration.ofSeconds(30),
          () -> cluster.node("n1").requestLimits().openWatches() == 0);
    }
  }
}
