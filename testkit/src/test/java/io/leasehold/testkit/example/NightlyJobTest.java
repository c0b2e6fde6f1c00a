package io.leasehold.testkit.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.AcquireResult;
import io.leasehold.client.Conflict;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.testkit.LeaseholdCluster;
import io.leasehold.testkit.LeaseholdExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class NightlyJobTest {
  @RegisterExtension static final LeaseholdExtension leasehold = LeaseholdExtension.cluster(3);

  @Test
  void onlyOneWorkerRunsTheJob(LeaseholdCluster cluster) {
    try (LeaseholdClient a = cluster.clientBuilder().holder("worker-a").build();
        LeaseholdClient b = cluster.clientBuilder().holder("worker-b").build()) {
      AcquireResult first = a.tryAcquire("jobs/nightly").join();
      AcquireResult second = b.tryAcquire("jobs/nightly").join();

      assertTrue(first.isGranted());
      Conflict conflict = assertInstanceOf(Conflict.class, second);
      assertEquals("worker-a", conflict.holder());
    }
  }

  @Test
  void theJobKeepsItsLeaseWhenTheLeaderDies(LeaseholdCluster cluster, LeaseholdClient client) {
    LeaseOptions thirtySeconds = LeaseOptions.defaults().withTtl(Duration.ofSeconds(30));
    Lease lease = client.acquire("jobs/failover", thirtySeconds).join();

    cluster.kill(cluster.leader());

    LeaseInfo held = client.get("jobs/failover").join().orElseThrow();
    assertEquals(lease.token(), held.token());
    assertTrue(lease.isValid());
  }
}
