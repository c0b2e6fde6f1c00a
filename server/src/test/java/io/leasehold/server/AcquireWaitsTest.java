package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.release;
import static io.leasehold.server.TestCluster.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.protobuf.util.Durations;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.SetPolicyRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Acquire calls with a wait: queued on their node, granted in order of arrival as the name frees.
 */
class AcquireWaitsTest {
  @TempDir static Path dir;
  static TestCluster cluster;
  static LeaseholdNode node;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.start(1, dir);
    node = cluster.awaitLeader();
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static LeasesGrpc.LeasesFutureStub async(Duration deadline) {
    return LeasesGrpc.newFutureStub(cluster.channel(node.id()))
        .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static AcquireRequest waiting(String name, String holder, Duration wait) {
    return acquire(name, holder, 30).toBuilder()
        .setWait(Durations.fromMillis(wait.toMillis()))
        .build();
  }

  /** Sends a waiting Acquire and returns once the node has queued it. */
  private static ListenableFuture<AcquireResponse> queue(AcquireRequest request) {
    int before = node.waitingAcquires();
    ListenableFuture<AcquireResponse> f = async(Duration.ofSeconds(60)).acquire(request);
    await(
        request.getHolder() + " is queued",
        Duration.ofSeconds(10),
        () -> node.waitingAcquires() > before || f.isDone());
    return f;
  }

  private static AcquireResponse done(ListenableFuture<AcquireResponse> f) throws Exception {
    return f.get(20, TimeUnit.SECONDS);
  }

  @Test
  void waitersAreGrantedTheNameInTheOrderTheyArrived() throws Exception {
    String name = "fair/in-order";
    AcquireResponse first = cluster.leases(node.id()).acquire(acquire(name, "holder-0", 30));
    assertEquals(Outcome.GRANTED, first.getOutcome());
    List<ListenableFuture<AcquireResponse>> waiters = new ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      waiters.add(queue(waiting(name, "holder-" + i, Duration.ofSeconds(30))));
    }
    // Only the head asks: the rest never reach the log while the name is held.
    assertEquals(5, node.waitingAcquires());
    waiters.forEach(f -> assertFalse(f.isDone(), "no waiter is answered while the name is held"));

    long token = first.getLease().getToken();
    for (int i = 0; i < waiters.size(); i++) {
      cluster.leases(node.id()).release(release(name, token));
      AcquireResponse granted = done(waiters.get(i));
      assertEquals(Outcome.GRANTED, granted.getOutcome(), "waiter " + (i + 1) + ": " + granted);
      assertEquals("holder-" + (i + 1), granted.getLease().getHolder());
      assertTrue(granted.getLease().getToken() > token, "tokens increase with each hand-over");
      token = granted.getLease().getToken();
      for (int j = i + 1; j < waiters.size(); j++) {
        assertFalse(
            waiters.get(j).isDone(),
            "waiter " + (j + 1) + " is not answered before waiter " + (i + 1) + " releases");
      }
    }
    cluster.leases(node.id()).release(release(name, token));
    await("the queue is gone", Duration.ofSeconds(10), () -> node.waitingAcquires() == 0);
  }

  @Test
  void aWaitThatEndsWhileTheNameIsHeldIsAnsweredWithTheConflict() throws Exception {
    String name = "fair/held";
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(node.id()).acquire(acquire(name, "owner", 30)).getOutcome());
    long t0 = System.nanoTime();
    ListenableFuture<AcquireResponse> behind =
        queue(waiting(name, "second", Duration.ofMillis(600)));
    ListenableFuture<AcquireResponse> last = queue(waiting(name, "third", Duration.ofMillis(300)));
    AcquireResponse third = done(last);
    assertEquals(Outcome.CONFLICT, third.getOutcome(), third.toString());
    assertEquals(
        "owner",
        third.getConflict().getHolder(),
        "a waiter that never asked is told who holds the name");
    AcquireResponse second = done(behind);
    assertEquals(Outcome.CONFLICT, second.getOutcome(), second.toString());
    assertEquals("owner", second.getConflict().getHolder());
    assertTrue(
        System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(600),
        "answered once its wait was over");
    await("the queue is gone", Duration.ofSeconds(10), () -> node.waitingAcquires() == 0);
  }

  @Test
  void aCallThatGoesAwayLeavesTheQueueAndTheNextIsServed() throws Exception {
    String name = "fair/cancelled";
    AcquireResponse first = cluster.leases(node.id()).acquire(acquire(name, "owner", 30));
    int before = node.waitingAcquires();
    ListenableFuture<AcquireResponse> gone =
        async(Duration.ofMillis(500)).acquire(waiting(name, "impatient", Duration.ofSeconds(30)));
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> gone.get(20, TimeUnit.SECONDS));
    assertEquals(
        Status.Code.DEADLINE_EXCEEDED,
        ((StatusRuntimeException) e.getCause()).getStatus().getCode());
    await(
        "the gone call leaves the queue",
        Duration.ofSeconds(10),
        () -> node.waitingAcquires() == before);
    ListenableFuture<AcquireResponse> next =
        queue(waiting(name, "patient", Duration.ofSeconds(30)));
    cluster.leases(node.id()).release(release(name, first.getLease().getToken()));
    AcquireResponse granted = done(next);
    assertEquals("patient", granted.getLease().getHolder(), granted.toString());
    cluster.leases(node.id()).release(release(name, granted.getLease().getToken()));
  }

  @Test
  void aWaiterRidesOutTheLockDelayAfterAnExpiry() throws Exception {
    cluster
        .admin(node.id())
        .setPolicy(
            SetPolicyRequest.newBuilder()
                .setNamespace("delayed")
                .setPolicy(Policy.newBuilder().setLockDelay(Durations.fromMillis(1_500)))
                .build());
    String name = "delayed/job";
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(node.id()).acquire(acquire(name, "short-lived", 2)).getOutcome());
    ListenableFuture<AcquireResponse> w = queue(waiting(name, "next", Duration.ofSeconds(30)));
    AcquireResponse granted = done(w);
    assertEquals(
        Outcome.GRANTED,
        granted.getOutcome(),
        "granted once the lease expired and its lock-delay passed: " + granted);
    assertEquals("next", granted.getLease().getHolder());
    cluster.leases(node.id()).release(release(name, granted.getLease().getToken()));
  }

  @Test
  void aRetriedRequestIdIsAskedAgainNotAnsweredWithItsOldConflict() throws Exception {
    String name = "fair/retried-id";
    AcquireResponse first = cluster.leases(node.id()).acquire(acquire(name, "owner", 30));
    AcquireRequest withId =
        waiting(name, "retrier", Duration.ofMillis(200)).toBuilder()
            .setRequestId("retry-1")
            .build();
    assertEquals(Outcome.CONFLICT, done(queue(withId)).getOutcome());
    cluster.leases(node.id()).release(release(name, first.getLease().getToken()));
    // The core remembers "retry-1" as a CONFLICT, but the name is free now: the call is granted,
    // long before its wait is over.
    long t0 = System.nanoTime();
    AcquireResponse again =
        done(
            async(Duration.ofSeconds(60))
                .acquire(withId.toBuilder().setWait(Requests.seconds(30)).build()));
    assertEquals(Outcome.GRANTED, again.getOutcome(), again.toString());
    assertTrue(
        System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20), "not held until the wait was over");
    cluster.leases(node.id()).release(release(name, again.getLease().getToken()));
  }

  @Test
  void aWaitOutsideItsRangeIsRefusedNamingTheField() {
    StatusRuntimeException negative =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .leases(node.id())
                    .acquire(
                        acquire("fair/bad", "h", 10).toBuilder()
                            .setWait(Durations.fromMillis(-5))
                            .build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, negative.getStatus().getCode());
    assertTrue(
        negative.getStatus().getDescription().startsWith("wait: must not be negative"),
        negative.getStatus().getDescription());
    StatusRuntimeException tooLong =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                cluster
                    .leases(node.id())
                    .acquire(
                        acquire("fair/bad", "h", 10).toBuilder()
                            .setWait(Durations.fromSeconds(601))
                            .build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, tooLong.getStatus().getCode());
    assertTrue(
        tooLong.getStatus().getDescription().startsWith("wait: must be at most 600s"),
        tooLong.getStatus().getDescription());
  }

  @Test
  void aWaitingCallForAFreeNameIsGrantedAtOnce() throws Exception {
    AcquireResponse r =
        done(
            async(Duration.ofSeconds(30))
                .acquire(waiting("fair/free", "anyone", Duration.ofSeconds(30))));
    assertEquals(Outcome.GRANTED, r.getOutcome());
    cluster.leases(node.id()).release(release("fair/free", r.getLease().getToken()));
  }
}
