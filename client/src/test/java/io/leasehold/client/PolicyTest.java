package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Duration;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.DeletePolicyRequest;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.UnbanRequest;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The SDK under the cluster's policy: lock-delays waited out, refused renewals, bans. */
class PolicyTest {
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

  private static Duration seconds(long s) {
    return Duration.newBuilder().setSeconds(s).build();
  }

  private static void setPolicy(String namespace, Policy.Builder policy) {
    cluster
        .admin(cluster.ids().get(0))
        .setPolicy(SetPolicyRequest.newBuilder().setNamespace(namespace).setPolicy(policy).build());
  }

  @Test
  void aWaitingAcquisitionWaitsOutTheLockDelayAfterAnExpiry() throws Exception {
    setPolicy("delayed", Policy.newBuilder().setLockDelay(seconds(2)));
    Partition pause = new Partition();
    try (LeaseholdClient first = Fixtures.client(cluster, b -> b.interceptor(pause));
        LeaseholdClient waiter = Fixtures.client(cluster);
        LeaseholdClient prober = Fixtures.client(cluster)) {
      Lease old = first.blocking().acquire("delayed/job", ttl(2));
      CompletableFuture<Long> expiredAt = new CompletableFuture<>();
      Watch w =
          prober.watch(
              "delayed/",
              0,
              e -> {
                if (e.type() == EventType.EXPIRED) {
                  expiredAt.complete(System.nanoTime());
                }
              });
      Fixtures.await("positioned", java.time.Duration.ofSeconds(10), () -> w.revision() > 0);
      CompletableFuture<Lease> next =
          waiter.acquire("delayed/job", ttl(5).withWait(java.time.Duration.ofSeconds(30)));

      pause.cut(); // the first holder stops renewing: its lease expires, and the lock-delay starts
      long expired = expiredAt.get(15, TimeUnit.SECONDS);
      AcquireResult during = prober.blocking().tryAcquire("delayed/job", ttl(5));
      if (during instanceof Rejected rejected) {
        assertEquals(RejectReason.LOCK_DELAY, rejected.rejection().reason());
        assertTrue(rejected.rejection().retryAfter().isPresent());
      }
      assertFalse(during.isGranted(), "nobody gets the name during the lock-delay: " + during);

      Lease got = next.get(15, TimeUnit.SECONDS);
      long waited = System.nanoTime() - expired;
      assertTrue(
          waited >= TimeUnit.MILLISECONDS.toNanos(1500),
          "granted " + waited / 1_000_000 + " ms after the expiry was seen");
      assertTrue(got.token() > old.token());
      pause.heal();
      w.close();
    }
  }

  @Test
  void aRenewalThePolicyRefusesPutsTheLeaseInJeopardyUntilItIsAllowedAgain() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Lease lease = client.blocking().acquire("shrink/job", ttl(12));
      TransitionRecorder recorder = new TransitionRecorder();
      lease.addListener(recorder);
      setPolicy("shrink", Policy.newBuilder().setMaxTtl(seconds(6)));
      Fixtures.await(
          "JEOPARDY at the first refused renewal",
          java.time.Duration.ofSeconds(10),
          () -> lease.state() == LeaseState.JEOPARDY);
      assertEquals(RejectReason.TTL_OUT_OF_RANGE, lease.renewalRejection().orElseThrow().reason());
      assertTrue(lease.isValid(), "still held until its deadline");

      cluster
          .admin(cluster.ids().get(0))
          .deletePolicy(DeletePolicyRequest.newBuilder().setNamespace("shrink").build());
      Fixtures.await(
          "HELD again once renewals are allowed",
          java.time.Duration.ofSeconds(10),
          () -> lease.state() == LeaseState.HELD);
      assertTrue(lease.renewalRejection().isEmpty());
      assertFalse(recorder.saw(LeaseState.LOST));
      assertEquals(lease.token(), client.blocking().get("shrink/job").orElseThrow().token());
    }
  }

  @Test
  void aBannedHolderLosesItsLeasesAndItsRoutesAndCannotAcquire() throws Exception {
    try (LeaseholdClient banned = Fixtures.client(cluster);
        LeaseholdClient proxy = Fixtures.client(cluster)) {
      Lease lease =
          banned.blocking().acquire("banned/mailbox", ttl(10).withAddress("10.0.0.66:80"));
      RoutingTable table = proxy.blocking().routingTable("banned/");
      assertTrue(table.lookup("banned/mailbox").isPresent());
      cluster
          .admin(cluster.ids().get(0))
          .ban(BanRequest.newBuilder().setHolder(banned.holder()).setReason("test").build());
      try {
        Fixtures.await(
            "LOST", java.time.Duration.ofSeconds(10), () -> lease.state() == LeaseState.LOST);
        assertEquals(LossReason.NOT_HELD, lease.lossReason().orElseThrow());
        table.awaitRevision(proxy.blocking().list("banned/").revision()).get(10, TimeUnit.SECONDS);
        assertTrue(
            table.lookup("banned/mailbox").isEmpty(), "the route of a banned holder is gone");
        AcquireRejectedException e =
            assertThrows(
                AcquireRejectedException.class,
                () ->
                    banned
                        .blocking()
                        .acquire(
                            "banned/other", ttl(5).withWait(java.time.Duration.ofSeconds(10))));
        assertEquals(RejectReason.BANNED, e.rejection().reason());
        assertEquals(List.of(), banned.blocking().list("banned/").leases());
      } finally {
        cluster
            .admin(cluster.ids().get(0))
            .unban(UnbanRequest.newBuilder().setHolder(banned.holder()).build());
        table.close();
      }
    }
  }
}
