package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.MethodDescriptor;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Acquiring: one attempt, waiting through a watch, fairness, bounds, attributes. */
class AcquireTest {
  @TempDir static Path dir;
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = Fixtures.threeNodes(dir);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  @Test
  void tryAcquireReturnsTheHoldersConflictDetails() throws Exception {
    try (LeaseholdClient a = Fixtures.client(cluster);
        LeaseholdClient b = Fixtures.client(cluster)) {
      AcquireResult granted = a.blocking().tryAcquire("lock/try", ttl(20));
      Lease lease = assertInstanceOf(Granted.class, granted).lease();
      assertEquals(a.holder(), lease.holder());
      assertEquals(LeaseState.HELD, lease.state());
      assertTrue(lease.isValid());
      assertTrue(
          lease.remaining().compareTo(Duration.ofSeconds(15)) > 0, lease.remaining().toString());

      AcquireResult conflict = b.blocking().tryAcquire("lock/try", ttl(20));
      Conflict c = assertInstanceOf(Conflict.class, conflict);
      assertEquals(a.holder(), c.holder());
      assertEquals(lease.token(), c.token());
      assertTrue(c.remaining().compareTo(Duration.ZERO) > 0);
      assertFalse(conflict.isGranted());
    }
  }

  @Test
  void tryAcquireOfANameThisClientHoldsIsAConflictWithItsOwnLease() throws Exception {
    try (LeaseholdClient a = Fixtures.client(cluster)) {
      Lease lease = a.blocking().acquire("lock/mine", ttl(20));
      AcquireResult again = a.blocking().tryAcquire("lock/mine", ttl(20));
      Conflict c =
          assertInstanceOf(
              Conflict.class, again, "a second handle of the same client never shares the lease");
      assertEquals(lease.token(), c.token());
      assertEquals(a.holder(), c.holder());
    }
  }

  @Test
  void acquireIsQueuedOnTheLeaderAndGetsTheNameWhenItIsReleased() throws Exception {
    CallCounter calls = new CallCounter();
    try (LeaseholdClient holder = Fixtures.client(cluster);
        LeaseholdClient waiter = Fixtures.client(cluster, b -> b.interceptor(calls))) {
      Lease first = holder.blocking().acquire("lock/queued", ttl(20));
      // Held by the node the call reached: the leader once the client knows it, else the node it
      // asked first, which proposes through the leader as the name frees.
      int queued = waitingAcquires();
      CompletableFuture<Lease> pending = waiter.acquire("lock/queued", ttl(20));
      Fixtures.await(
          "a node queued the waiter's call",
          Duration.ofSeconds(10),
          () -> waitingAcquires() > queued);
      // One call, left unanswered while the name is held: no polling and no watch.
      Lease other = holder.blocking().acquire("lock/queued-other", ttl(20));
      other.release().get();
      assertFalse(pending.isDone());
      assertEquals(1, calls.count("Acquire"));
      assertEquals(0, calls.count("Watch"));

      first.release().get();
      Lease second = pending.get(10, TimeUnit.SECONDS);
      assertTrue(second.token() > first.token(), "a new grant has a larger token");
      assertEquals(1, calls.count("Acquire"), "the one call was answered with the grant");
      assertEquals(waiter.holder(), waiter.blocking().get("lock/queued").orElseThrow().holder());
    }
  }

  private int waitingAcquires() {
    return cluster.running().stream()
        .mapToInt(io.leasehold.server.LeaseholdNode::waitingAcquires)
        .sum();
  }

  @Test
  void againstANodeThatAnswersAtOnceAcquireWaitsThroughAWatch() throws Exception {
    CallCounter calls = new CallCounter();
    // A node that predates the Acquire's wait answers CONFLICT at once: as if the wait were not
    // sent.
    try (LeaseholdClient holder = Fixtures.client(cluster);
        LeaseholdClient waiter =
            Fixtures.client(cluster, b -> b.interceptor(calls).interceptor(new WithoutWait()))) {
      Lease first = holder.blocking().acquire("lock/wait", ttl(20));
      CompletableFuture<Lease> pending = waiter.acquire("lock/wait", ttl(20));
      Fixtures.await(
          "the waiter asked and watches",
          Duration.ofSeconds(10),
          () -> calls.succeeded("Acquire") == 1 && calls.count("Watch") >= 1);
      int asked = calls.count("Acquire");
      // The waiter stays quiet while the name is held: a watch, not polling. (A change to another
      // name under the same prefix does not wake it either.)
      Lease other = holder.blocking().acquire("lock/wait-other", ttl(20));
      other.release().get();
      holder.blocking().list("lock/");
      assertFalse(pending.isDone());
      assertEquals(asked, calls.count("Acquire"), "no polling while the name is held");

      first.release().get();
      Lease second = pending.get(10, TimeUnit.SECONDS);
      assertTrue(second.token() > first.token(), "a new grant has a larger token");
      assertEquals(2, calls.succeeded("Acquire"), "one answer before the release, one after");
      assertEquals(waiter.holder(), waiter.blocking().get("lock/wait").orElseThrow().holder());
    }
  }

  /** Sends Acquire requests without their wait, as to a node that does not know the field. */
  private static final class WithoutWait implements ClientInterceptor {
    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        @SuppressWarnings("unchecked")
        public void sendMessage(Q message) {
          super.sendMessage(
              message instanceof AcquireRequest r
                  ? (Q) r.toBuilder().clearWait().build()
                  : message);
        }
      };
    }
  }

  @Test
  void waitersInOneClientGetTheNameInArrivalOrder() throws Exception {
    try (LeaseholdClient holder = Fixtures.client(cluster);
        LeaseholdClient waiters = Fixtures.client(cluster)) {
      Lease first = holder.blocking().acquire("lock/fifo", ttl(20));
      List<Integer> order = new CopyOnWriteArrayList<>();
      List<CompletableFuture<Void>> done = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        int id = i;
        done.add(
            waiters
                .acquire("lock/fifo", ttl(20))
                .thenCompose(
                    lease -> {
                      order.add(id);
                      return lease.release();
                    }));
      }
      first.release().get();
      CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
      assertEquals(List.of(0, 1, 2, 3, 4), order);
    }
  }

  @Test
  void acquireGivesUpAfterItsWaitBoundWithTheHolder() throws Exception {
    try (LeaseholdClient holder = Fixtures.client(cluster);
        LeaseholdClient waiter = Fixtures.client(cluster)) {
      Lease held = holder.blocking().acquire("lock/bound", ttl(20));
      long start = System.nanoTime();
      AcquireTimeoutException e =
          assertThrows(
              AcquireTimeoutException.class,
              () -> waiter.blocking().acquire("lock/bound", Duration.ofMillis(700)));
      long waited = System.nanoTime() - start;
      assertTrue(
          waited >= TimeUnit.MILLISECONDS.toNanos(700), "waited " + waited / 1_000_000 + " ms");
      assertEquals(held.token(), e.lastConflict().orElseThrow().token());
      // A zero wait is one attempt.
      assertThrows(
          AcquireTimeoutException.class,
          () -> waiter.blocking().acquire("lock/bound", Duration.ZERO));
      assertTrue(held.isValid());
    }
  }

  @Test
  void aCancelledAcquisitionLeaksNoLease() throws Exception {
    try (LeaseholdClient holder = Fixtures.client(cluster);
        LeaseholdClient waiter = Fixtures.client(cluster)) {
      Lease held = holder.blocking().acquire("lock/cancel", ttl(20));
      CompletableFuture<Lease> pending = waiter.acquire("lock/cancel", ttl(20));
      CompletableFuture<Lease> next = waiter.acquire("lock/cancel", ttl(20));
      Fixtures.await("both wait", Duration.ofSeconds(5), () -> !pending.isDone() && !next.isDone());
      assertTrue(pending.cancel(true));
      held.release().get();
      Lease got = next.get(10, TimeUnit.SECONDS);
      assertEquals(
          waiter.holder(), got.holder(), "the next waiter got the name, not the cancelled one");
      got.release().get();
      assertTrue(holder.blocking().get("lock/cancel").isEmpty(), "nothing was left held");
    }
  }

  @Test
  void aTryRightAfterAnAbandonedWaitWasGrantedWaitsForTheGiveBackInsteadOfMeetingItsOwnLease()
      throws Exception {
    CallGate answers = new CallGate("leasehold.v1.Leases/Acquire", CallGate.Side.ANSWER);
    CallGate releases = new CallGate("leasehold.v1.Leases/Release", CallGate.Side.REQUEST);
    try (LeaseholdClient client =
        Fixtures.client(cluster, b -> b.interceptor(answers).interceptor(releases))) {
      // The waiter gives up while its attempt is out; the cluster grants it anyway.
      answers.close();
      CompletableFuture<Lease> abandoned = client.acquire("lock/given-back", ttl(20));
      Fixtures.await(
          "the attempt to be out", Duration.ofSeconds(5), () -> answers.heldCalls() == 1);
      assertTrue(abandoned.cancel(true));
      releases.close();
      answers.open();
      // The client gives the unwanted lease back; its Release is held on the way.
      Fixtures.await(
          "the give-back to be on its way", Duration.ofSeconds(5), () -> releases.heldCalls() == 1);
      CompletableFuture<AcquireResult> tried = client.tryAcquire("lock/given-back", ttl(20));
      releases.open();
      AcquireResult r = tried.get(10, TimeUnit.SECONDS);
      // Answered before the give-back, it was CONFLICT with this client's own lease, which no
      // handle held any more.
      assertTrue(r.isGranted(), "the try waited for the give-back and got the name: " + r);
      ((Granted) r).lease().release().get(10, TimeUnit.SECONDS);
      assertTrue(client.blocking().get("lock/given-back").isEmpty(), "nothing was left held");
    }
  }

  @Test
  void updateChangesTheAttributesButNotTheToken() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Lease lease =
          client
              .blocking()
              .acquire(
                  "route/update", ttl(20).withAddress("10.0.0.1:80").withMetadata("zone", "a"));
      assertEquals("10.0.0.1:80", lease.attributes().address().orElseThrow());
      LeaseAttributes now = lease.update(AttributeUpdate.status("DRAINING")).get();
      assertEquals("DRAINING", now.status().orElseThrow());
      assertEquals("10.0.0.1:80", now.address().orElseThrow(), "fields not in the update stay");
      assertEquals(Map.of("zone", "a"), now.metadata());
      now = lease.update(AttributeUpdate.address("").andMetadata(Map.of())).get();
      assertTrue(now.address().isEmpty());
      LeaseInfo stored = client.blocking().get("route/update").orElseThrow();
      assertEquals(lease.token(), stored.token());
      assertEquals(now, stored.attributes());
      assertEquals(now, lease.attributes());
    }
  }

  @Test
  void aReleasedNameIsFreeAtOnceAndTheHandleIsNoLongerValid() throws Exception {
    try (LeaseholdClient a = Fixtures.client(cluster);
        LeaseholdClient b = Fixtures.client(cluster)) {
      Lease lease = a.blocking().acquire("lock/release", ttl(20));
      TransitionRecorder r = new TransitionRecorder();
      lease.addListener(r);
      lease.release().get();
      assertEquals(LeaseState.RELEASED, lease.state());
      assertFalse(lease.isValid());
      assertEquals(Duration.ZERO, lease.remaining());
      assertEquals(LeaseState.RELEASED, lease.ended().get(5, TimeUnit.SECONDS).to());
      AcquireResult next = b.blocking().tryAcquire("lock/release", ttl(20));
      assertTrue(next.isGranted());
      assertNotEquals(lease.token(), ((Granted) next).lease().token());
      Fixtures.await(
          "the transition reached the listener",
          Duration.ofSeconds(5),
          () -> r.states().equals(List.of(LeaseState.RELEASED)));
    }
  }

  @Test
  void getAndListReadTheLeasesWithTheirRevision() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      for (int i = 0; i < 3; i++) {
        client.blocking().acquire("list/item-" + i, ttl(20));
      }
      LeaseListing listing = client.blocking().list("list/");
      assertEquals(
          List.of("list/item-0", "list/item-1", "list/item-2"),
          listing.leases().stream().map(LeaseInfo::name).toList());
      assertTrue(
          listing.revision() >= listing.leases().get(2).modRevision(),
          "the listing reflects every grant");
      assertTrue(client.blocking().get("list/none").isEmpty());
      ExecutionException e = assertThrows(ExecutionException.class, () -> client.get("").get());
      assertTrue(e.getCause() instanceof InvalidRequestException);
    }
  }
}
