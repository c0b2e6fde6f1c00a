package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A lease's validity on the client's own clock: HELD, JEOPARDY, LOST, and never valid again. */
class LeaseValidityTest {
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

  @Test
  void aPausedClientGoesFromHeldToJeopardyToLostBeforeTheClusterExpiresTheLease() throws Exception {
    Partition pause = new Partition();
    try (LeaseholdClient paused = Fixtures.client(cluster, b -> b.interceptor(pause));
        LeaseholdClient other = Fixtures.client(cluster)) {
      Lease lease = paused.blocking().acquire("lock/paused", ttl(3));
      TransitionRecorder recorder = new TransitionRecorder();
      lease.addListener(recorder);
      // The moment the cluster expires the lease, as another client sees it: was the paused
      // client's handle still valid?
      CompletableFuture<Boolean> validWhenExpired = new CompletableFuture<>();
      Watch watch =
          other.watch(
              "lock/paused",
              0,
              e -> {
                if (e.type() == EventType.EXPIRED
                    && e.lease().orElseThrow().token() == lease.token()) {
                  validWhenExpired.complete(lease.isValid());
                }
              });
      Fixtures.await("the watch is positioned", Duration.ofSeconds(10), () -> watch.revision() > 0);
      CompletableFuture<Lease> next =
          other.acquire("lock/paused", ttl(3).withWait(Duration.ofSeconds(30)));

      pause.cut();
      Fixtures.await(
          "the handle is LOST", Duration.ofSeconds(10), () -> recorder.saw(LeaseState.LOST));
      List<LeaseState> states = recorder.states();
      assertEquals(
          List.of(LeaseState.JEOPARDY, LeaseState.LOST),
          states.subList(states.size() - 2, states.size()),
          "HELD -> JEOPARDY -> LOST: " + states);
      assertEquals(LossReason.DEADLINE_PASSED, lease.lossReason().orElseThrow());
      assertFalse(lease.isValid());

      assertFalse(
          validWhenExpired.get(10, TimeUnit.SECONDS),
          "the handle was no longer valid when the cluster expired the lease");
      Lease successor = next.get(10, TimeUnit.SECONDS);
      assertTrue(
          successor.token() > lease.token(),
          "the next holder's token " + successor.token() + " > " + lease.token());

      pause.heal();
      // Healing changes nothing for the old handle: LOST is final.
      Fixtures.await(
          "the paused client talks to the cluster again",
          Duration.ofSeconds(10),
          () -> paused.blocking().tryAcquire("lock/paused") instanceof Conflict);
      assertEquals(LeaseState.LOST, lease.state());
      assertFalse(lease.isValid());
      assertEquals(Duration.ZERO, lease.remaining());
      assertEquals(states, recorder.states(), "nothing after LOST");
      watch.close();
    }
  }

  @Test
  void renewalsThatResumeInTimeBringJeopardyBackToHeld() throws Exception {
    Partition pause = new Partition();
    try (LeaseholdClient client = Fixtures.client(cluster, b -> b.interceptor(pause))) {
      Lease lease = client.blocking().acquire("lock/blip", ttl(6));
      TransitionRecorder recorder = new TransitionRecorder();
      lease.addListener(recorder);
      pause.cut();
      Fixtures.await(
          "JEOPARDY", Duration.ofSeconds(10), () -> lease.state() == LeaseState.JEOPARDY);
      assertTrue(lease.isValid(), "still valid in jeopardy");
      pause.heal();
      Fixtures.await("HELD again", Duration.ofSeconds(5), () -> lease.state() == LeaseState.HELD);
      assertTrue(lease.isValid());
      assertTrue(
          lease.remaining().compareTo(Duration.ofSeconds(4)) > 0, "renewed: " + lease.remaining());
      Fixtures.await(
          "both transitions delivered", Duration.ofSeconds(5), () -> recorder.states().size() >= 2);
      List<LeaseState> states = recorder.states();
      assertEquals(
          List.of(LeaseState.JEOPARDY, LeaseState.HELD),
          states.subList(states.size() - 2, states.size()),
          states.toString());
      assertFalse(recorder.saw(LeaseState.LOST));
      assertEquals(lease.token(), client.blocking().get("lock/blip").orElseThrow().token());
    }
  }

  @Test
  void theClusterSayingNotHeldMakesTheLeaseLostAtOnce() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Lease lease = client.blocking().acquire("lock/revoked", ttl(3));
      TransitionRecorder recorder = new TransitionRecorder();
      lease.addListener(recorder);
      // Someone else ends the lease behind the client's back (as an admin revoke would).
      cluster.leases(cluster.ids().get(0)).release(Requests.release("lock/revoked", lease.token()));
      Fixtures.await(
          "LOST at the next renewal", Duration.ofSeconds(5), () -> recorder.saw(LeaseState.LOST));
      assertEquals(LossReason.NOT_HELD, lease.lossReason().orElseThrow());
      assertEquals(LeaseState.LOST, recorder.states().get(recorder.states().size() - 1));
      LeaseLostException e =
          (LeaseLostException)
              Assertions.assertThrows(
                      ExecutionException.class,
                      () -> lease.update(AttributeUpdate.status("X")).get())
                  .getCause();
      assertTrue(e.getMessage().contains("no longer held"), e.getMessage());
      lease.release().get(); // releasing a lost lease is allowed
      assertEquals(LeaseState.LOST, lease.ended().get(5, TimeUnit.SECONDS).to());
    }
  }

  @Test
  void aListenerAddedAfterTheLeaseEndedIsToldOfTheEndAtOnce() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      Lease lease = client.blocking().acquire("lock/late-listener", Fixtures.ttl(20));
      lease.release().get(10, TimeUnit.SECONDS);
      TransitionRecorder r = new TransitionRecorder();
      lease.addListener(r);
      Fixtures.await(
          "the final transition reached the late listener",
          Duration.ofSeconds(5),
          () -> r.saw(LeaseState.RELEASED));
      LeaseTransition end = lease.ended().get(5, TimeUnit.SECONDS);
      assertEquals(LeaseState.HELD, end.from());
      assertEquals(LeaseState.RELEASED, end.to());
      assertEquals(List.of(end), r.transitions());
    }
  }

  @Test
  void listenersRunOnTheChosenExecutorNeverOnGrpcThreads() throws Exception {
    AtomicInteger n = new AtomicInteger();
    ExecutorService app =
        Executors.newFixedThreadPool(2, r -> new Thread(r, "app-callback-" + n.incrementAndGet()));
    try (LeaseholdClient client = Fixtures.client(cluster, b -> b.callbackExecutor(app))) {
      List<String> watchThreads = new CopyOnWriteArrayList<>();
      Watch watch =
          client.watch("lock/threads", 0, e -> watchThreads.add(Thread.currentThread().getName()));
      Fixtures.await("the watch is positioned", Duration.ofSeconds(10), () -> watch.revision() > 0);
      CompletableFuture<String> completedOn = new CompletableFuture<>();
      CompletableFuture<Lease> acquired = client.acquire("lock/threads", ttl(5));
      acquired.whenComplete((l, e) -> completedOn.complete(Thread.currentThread().getName()));
      Lease lease = acquired.get(10, TimeUnit.SECONDS);
      TransitionRecorder recorder = new TransitionRecorder();
      lease.addListener(recorder);
      lease.release().get();
      Fixtures.await(
          "the transition and the events",
          Duration.ofSeconds(10),
          () -> recorder.saw(LeaseState.RELEASED) && watchThreads.size() >= 2);
      for (String t : recorder.threads()) {
        assertTrue(t.startsWith("app-callback-"), "lease listener ran on " + t);
      }
      for (String t : watchThreads) {
        assertTrue(t.startsWith("app-callback-"), "watch listener ran on " + t);
      }
      String t = completedOn.get();
      assertTrue(
          t.startsWith("app-callback-") || t.equals(Thread.currentThread().getName()),
          "future completed on " + t);
      watch.close();
    } finally {
      app.shutdownNow();
    }
  }
}
