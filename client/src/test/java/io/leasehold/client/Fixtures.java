package io.leasehold.client;

import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/** Clusters and clients for the SDK's tests. */
final class Fixtures {
  private Fixtures() {}

  static TestCluster threeNodes(Path dir) throws IOException {
    return TestCluster.start(3, dir);
  }

  /**
   * Three nodes with {@link TestCluster#steadyElections}, for tests that count on leadership
   * holding still.
   */
  static TestCluster stableThreeNodes(Path dir) throws IOException {
    return TestCluster.start(3, dir, TestCluster::steadyElections);
  }

  /** Every node's client address, {@code first}'s first (so it is the client's home node). */
  static List<String> endpoints(TestCluster cluster, String first) {
    List<String> out = new ArrayList<>();
    out.add(cluster.node(first).clientAddress());
    for (LeaseholdNode n : cluster.running()) {
      if (!n.id().equals(first)) {
        out.add(n.clientAddress());
      }
    }
    return out;
  }

  static List<String> endpoints(TestCluster cluster) {
    return endpoints(cluster, cluster.running().get(0).id());
  }

  /** A client of every node, with short timeouts suited to tests. */
  static LeaseholdClient client(TestCluster cluster, UnaryOperator<LeaseholdClientBuilder> tweak) {
    return client(endpoints(cluster), tweak);
  }

  static LeaseholdClient client(
      List<String> endpoints, UnaryOperator<LeaseholdClientBuilder> tweak) {
    return tweak
        .apply(
            LeaseholdClient.builder()
                .endpoints(endpoints)
                .requestTimeout(Duration.ofSeconds(20))
                .attemptTimeout(Duration.ofSeconds(3)))
        .build();
  }

  static LeaseholdClient client(TestCluster cluster) {
    return client(cluster, b -> b);
  }

  /** Acquires {@code name} for a minute through {@code client} and releases it, within 30 s. */
  static void acquireAndRelease(LeaseholdClient client, String name) {
    try {
      client.blocking().acquire(name, ttl(60)).release().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("acquire and release of " + name, e);
    }
  }

  static LeaseOptions ttl(long seconds) {
    return LeaseOptions.defaults().withTtl(Duration.ofSeconds(seconds));
  }

  /**
   * As {@link #await(String, Duration, java.util.function.BooleanSupplier)}, describing the state
   * when it gave up.
   */
  static void await(Supplier<String> what, Duration timeout, BooleanSupplier condition) {
    TestCluster.await(what, timeout, condition);
  }

  /** Waits on a condition with a deadline (never a fixed sleep). */
  static void await(String what, Duration timeout, BooleanSupplier condition) {
    TestCluster.await(what, timeout, condition);
  }
}
