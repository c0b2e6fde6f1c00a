package io.leasehold.testkit.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.Conflict;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.testkit.LeaseholdContainer;
import io.leasehold.testkit.LeaseholdContainerCluster;
import io.leasehold.testkit.LeaseholdTls;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

// The guide shows this class from @Testcontainers on. Here it is also skipped where the image has
// not been built (see BuiltImage): Testcontainers would try to pull it.
@EnabledIf(
    value = "io.leasehold.testkit.example.BuiltImage#present",
    disabledReason =
        "no Docker engine, or no leasehold:dev image on it (deploy/docker/build-image.sh builds it)")
@Testcontainers(disabledWithoutDocker = true)
class NightlyJobContainerTest {
  @Container
  static final LeaseholdContainer leasehold =
      new LeaseholdContainer(LeaseholdContainer.DEFAULT_IMAGE_NAME);

  @Container
  static final LeaseholdContainerCluster cluster =
      LeaseholdContainer.cluster(LeaseholdContainer.DEFAULT_IMAGE_NAME, 3).withTls();

  @Test
  void onlyOneWorkerRunsTheJob() {
    try (LeaseholdClient a = leasehold.clientBuilder().holder("worker-a").build();
        LeaseholdClient b = leasehold.clientBuilder().holder("worker-b").build()) {
      assertTrue(a.tryAcquire("jobs/nightly").join().isGranted());

      Conflict conflict = assertInstanceOf(Conflict.class, b.tryAcquire("jobs/nightly").join());
      assertEquals("worker-a", conflict.holder());
    }
  }

  @Test
  void aWorkerProvesWhoItIsWithItsCertificate() {
    try (LeaseholdClient admin = cluster.clientBuilder().build()) {
      admin.auth().grant("worker-a", "client").join();
    }
    LeaseholdTls.Identity worker = cluster.tls().client("worker-a");
    try (LeaseholdClient client =
        LeaseholdClient.builder()
            .endpoints(cluster.addresses())
            .discoverMembers(false)
            .tls(cluster.tls().caCertificate(), worker.certificate(), worker.key())
            .build()) {
      LeaseOptions thirtySeconds = LeaseOptions.defaults().withTtl(Duration.ofSeconds(30));
      Lease lease = client.acquire("jobs/nightly", thirtySeconds).join();

      assertEquals("worker-a", lease.holder());
    }
  }
}
