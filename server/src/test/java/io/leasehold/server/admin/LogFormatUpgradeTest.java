package io.leasehold.server.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.server.TestCluster;
import io.leasehold.statemachine.core.LogFormat;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LogFormatUpgradeTest {
  /**
   * A leader over members whose code applies the formats in {@code newest} (0: refuses the
   * question).
   */
  final class Fake implements LogFormatUpgrade.Cluster {
    final AtomicInteger current = new AtomicInteger(LogFormat.FIRST);
    final AtomicBoolean leader = new AtomicBoolean(true);
    final Map<String, Integer> newest =
        new ConcurrentHashMap<>(Map.of("n2", LogFormat.NEWEST, "n3", LogFormat.NEWEST));
    final List<Integer> proposed = new CopyOnWriteArrayList<>();
    final AtomicInteger asked = new AtomicInteger();

    @Override
    public int currentFormat() {
      return current.get();
    }

    @Override
    public boolean isLeader() {
      return leader.get();
    }

    @Override
    public List<String> otherMembers() {
      return List.copyOf(newest.keySet());
    }

    @Override
    public CompletableFuture<Integer> newestFormatOf(String member) {
      asked.incrementAndGet();
      int f = newest.get(member);
      return f == 0
          ? CompletableFuture.failedFuture(new IllegalStateException("query: carries no request"))
          : CompletableFuture.completedFuture(f);
    }

    @Override
    public CompletableFuture<?> propose(int format) {
      proposed.add(format);
      current.set(format);
      return CompletableFuture.completedFuture(null);
    }
  }

  final Fake cluster = new Fake();
  final LogFormatUpgrade upgrade = new LogFormatUpgrade(cluster, Duration.ofMillis(20));

  @AfterEach
  void close() {
    upgrade.close();
  }

  @Test
  void whenEveryMemberAppliesTheNewestFormatTheLeaderRaisesItOnce() {
    upgrade.promote();
    TestCluster.await(
        "the format raised",
        Duration.ofSeconds(5),
        () -> cluster.current.get() == LogFormat.NEWEST);
    assertEquals(List.of(LogFormat.NEWEST), cluster.proposed);
  }

  @Test
  void aMemberThatPredatesTheQuestionKeepsTheFormatUntilItIsUpgraded() {
    cluster.newest.put("n3", 0);
    upgrade.promote();
    TestCluster.await("asked several times", Duration.ofSeconds(5), () -> cluster.asked.get() >= 6);
    assertEquals(List.of(), cluster.proposed, "not while n3 runs older code");

    cluster.newest.put("n3", LogFormat.NEWEST); // n3 restarted on new code
    TestCluster.await(
        "the format raised",
        Duration.ofSeconds(5),
        () -> cluster.current.get() == LogFormat.NEWEST);
    assertEquals(List.of(LogFormat.NEWEST), cluster.proposed);
  }
}
