package io.leasehold.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The extension's lifecycle: one cluster a class, made whole before each test. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LeaseholdExtensionTest {
  private static final LeaseOptions MINUTE = LeaseOptions.defaults().withTtl(Duration.ofMinutes(1));

  @RegisterExtension
  static final LeaseholdExtension leasehold =
      LeaseholdExtension.cluster(3).configure(b -> b.maxRenewItems(500));

  static String endpointsSeenBeforeAll;

  @BeforeAll
  static void before(LeaseholdCluster cluster) {
    endpointsSeenBeforeAll = cluster.endpoints();
  }

  @Test
  @Order(1)
  void testsGetTheClassesClusterAndItsSharedClient(
      LeaseholdCluster cluster, LeaseholdClient client) {
    assertSame(leasehold.cluster(), cluster);
    assertSame(cluster.client(), client);
    assertEquals(endpointsSeenBeforeAll, leasehold.endpoints());
    assertEquals(3, cluster.nodeIds().size());
    assertEquals(500, cluster.node("n1").config().limits().renewItems());
    client.acquire("ext/kept", MINUTE).join();
  }

  @Test
  @Order(2)
  void aTestBreaksTheCluster(LeaseholdCluster cluster) {
    cluster.kill(cluster.leader());
    cluster.isolate(cluster.followers().get(0));
  }

  @Test
  @Order(3)
  void theNextTestFindsItWholeWithTheEarlierState(LeaseholdCluster cluster) {
    assertTrue(cluster.nodeIds().stream().allMatch(cluster::isRunning));
    assertTrue(cluster.nodeIds().stream().noneMatch(cluster::isIsolated));
    assertTrue(cluster.client().get("ext/kept").join().isPresent());
  }

  /** An instance field: a fresh standalone node for each test. */
  @Nested
  @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
  class PerTest {
    @RegisterExtension final LeaseholdExtension own = LeaseholdExtension.standalone();

    @Test
    @Order(1)
    void theFirstTestLeavesALease() {
      own.client().acquire("ext/own", MINUTE).join();
      assertEquals(1, own.cluster().nodeIds().size());
    }

    @Test
    @Order(2)
    void theNextTestHasANewNode() {
      assertFalse(own.client().get("ext/own").join().isPresent());
    }

    @Test
    @Order(3)
    void parametersComeFromTheInnermostExtension(LeaseholdCluster cluster, LeaseholdClient client) {
      assertSame(own.cluster(), cluster);
      assertSame(own.client(), client);
      assertEquals(1, cluster.nodeIds().size());
    }
  }
}
