package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Misuse fails loudly, at the call, with a message that says what was wrong. */
class MisuseTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(1, dir);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  @Test
  void releasingALeaseTwiceFails() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Lease lease = client.blocking().acquire("lock/twice", ttl(10));
      lease.release().get();
      IllegalStateException e = assertThrows(IllegalStateException.class, lease::release);
      assertTrue(
          e.getMessage().contains("lock/twice") && e.getMessage().contains("already released"),
          e.getMessage());
      lease.close(); // close stays idempotent
      assertThrows(IllegalStateException.class, () -> lease.update(AttributeUpdate.status("X")));
    }
  }

  @Test
  void aClosedClientRefusesEveryCall() throws Exception {
    LeaseholdClient client = Fixtures.client(cluster);
    client.close();
    assertTrue(client.isClosed());
    for (Runnable call :
        new Runnable[] {
          () -> client.acquire("lock/x", ttl(10)),
          () -> client.tryAcquire("lock/x"),
          () -> client.get("lock/x"),
          () -> client.list("lock/"),
          () -> client.checkToken("lock/x", 1),
          () -> client.lock("lock/x"),
          () -> client.register("svc", "i-1", "10.0.0.1:80", Map.of()),
          () -> client.resolve("svc"),
          () -> client.routingTable(),
          () -> client.watch("lock/", 0, e -> {})
        }) {
      ClientClosedException e = assertThrows(ClientClosedException.class, call::run);
      assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }
    client.close(); // idempotent
  }

  @Test
  void closingTheClientFailsPendingAcquisitionsAndReleasesItsLeases() throws Exception {
    try (LeaseholdClient other = Fixtures.client(cluster)) {
      LeaseholdClient client = Fixtures.client(cluster);
      Lease held = client.blocking().acquire("lock/closing-held", ttl(30));
      TransitionRecorder recorder = new TransitionRecorder();
      held.addListener(recorder);
      other.blocking().acquire("lock/closing-busy", ttl(30));
      CompletableFuture<Lease> waiting = client.acquire("lock/closing-busy", ttl(30));
      Fixtures.await("the waiter to be queued", Duration.ofSeconds(5), () -> !waiting.isDone());
      client.close();
      ExecutionException e = assertThrows(ExecutionException.class, waiting::get);
      assertTrue(e.getCause() instanceof ClientClosedException, e.getCause().toString());
      assertEquals(LeaseState.RELEASED, held.state());
      assertFalse(held.isValid());
      assertTrue(
          other.blocking().get("lock/closing-held").isEmpty(),
          "the cluster freed the name at once");
      Fixtures.await(
          "the RELEASED transition is delivered",
          Duration.ofSeconds(5),
          () -> recorder.saw(LeaseState.RELEASED));
    }
  }

  @Test
  void anInvalidNameSurfacesTheClustersMessage() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      ExecutionException e =
          assertThrows(
              ExecutionException.class, () -> client.acquire("no-namespace", ttl(10)).get());
      InvalidRequestException invalid = (InvalidRequestException) e.getCause();
      assertTrue(
          invalid.getMessage().startsWith("name: must be namespace/rest"), invalid.getMessage());
      assertEquals("name", invalid.field().orElseThrow());

      // The blocking facade throws the same exception, unwrapped.
      InvalidRequestException again =
          assertThrows(
              InvalidRequestException.class, () -> client.blocking().tryAcquire("bad\u0001/name"));
      assertTrue(
          again.getMessage().startsWith("name: must not contain control characters"),
          again.getMessage());
    }
  }

  @Test
  void aTtlOutsideTheBoundsIsRejectedWithTheBounds() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      AcquireResult r =
          client
              .blocking()
              .tryAcquire("lock/short", LeaseOptions.defaults().withTtl(Duration.ofMillis(500)));
      Rejection rejection = assertInstanceOf(Rejected.class, r).rejection();
      assertEquals(RejectReason.TTL_OUT_OF_RANGE, rejection.reason());
      assertEquals(Duration.ofSeconds(2), rejection.minTtl().orElseThrow());
      AcquireRejectedException e =
          assertThrows(
              AcquireRejectedException.class,
              () ->
                  client
                      .blocking()
                      .acquire(
                          "lock/short", LeaseOptions.defaults().withTtl(Duration.ofMillis(500))));
      assertEquals(RejectReason.TTL_OUT_OF_RANGE, e.rejection().reason());
    }
  }

  @Test
  void unlockingALockThisThreadDoesNotHoldFails() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      LeaseLock lock = client.lock("lock/not-mine", ttl(10));
      assertThrows(IllegalMonitorStateException.class, lock::unlock);
      assertThrows(IllegalMonitorStateException.class, lock::token);
      assertThrows(UnsupportedOperationException.class, lock::newCondition);
    }
  }

  @Test
  void builderRefusesBadOptions() {
    assertThrows(IllegalArgumentException.class, () -> LeaseholdClient.builder().build());
    assertThrows(IllegalArgumentException.class, () -> LeaseholdClient.builder().endpoints(" "));
    assertThrows(
        IllegalArgumentException.class,
        () -> LeaseholdClient.builder().requestTimeout(Duration.ZERO));
    assertThrows(
        IllegalArgumentException.class,
        () -> LeaseholdClient.builder().clockDrift(0.7, Duration.ZERO));
    assertThrows(
        IllegalArgumentException.class,
        () -> LeaseOptions.defaults().withWait(Duration.ofSeconds(-1)));
    assertThrows(
        IllegalArgumentException.class,
        () -> new AttributeUpdate(Optional.empty(), Optional.empty(), Optional.empty()));
  }
}
