package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's session (leases attached to one keep-alive) and handing a lease to another holder.
 */
class SessionTest {
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
  void leasesWithoutATtlOfTheirOwnShareTheClientsSessionAndOneWithATtlDoesNot() throws Exception {
    try (LeaseholdClient client =
        Fixtures.client(cluster, b -> b.holder("runner-s1").sessionTtl(Duration.ofSeconds(3)))) {
      Lease a = client.blocking().acquire("lock/s1-a", LeaseOptions.defaults());
      Lease b = client.blocking().acquire("lock/s1-b", LeaseOptions.defaults());
      Lease own = client.blocking().acquire("lock/s1-own", ttl(30));
      assertNotEquals(0, a.session());
      assertEquals(a.session(), b.session());
      assertEquals(0, own.session());
      assertEquals(Duration.ofSeconds(3), a.ttl(), "an attached lease has its session's TTL");

      SessionDetail s = client.admin().session(a.session()).get(10, TimeUnit.SECONDS).orElseThrow();
      assertEquals("runner-s1", s.session().holder());
      assertEquals(List.of("lock/s1-a", "lock/s1-b"), s.leases());
      assertEquals(a.session(), client.blocking().get("lock/s1-a").orElseThrow().session());

      // Over three TTLs (the session kept alive at least six times, a third of its TTL apart) both
      // stay held.
      long renewsBefore = s.session().renewCount();
      long startedAt = System.nanoTime();
      Fixtures.await(
          "six keep-alives",
          Duration.ofSeconds(30),
          () ->
              client
                  .admin()
                  .session(a.session())
                  .join()
                  .map(d -> d.session().renewCount() >= renewsBefore + 6)
                  .orElse(false));
      assertTrue(
          System.nanoTime() - startedAt >= Duration.ofSeconds(5).toNanos(),
          "keep-alives a heartbeat apart");
      assertEquals(LeaseState.HELD, a.state());
      assertEquals(LeaseState.HELD, b.state());
      assertEquals(
          0,
          client.blocking().get("lock/s1-a").orElseThrow().renewCount(),
          "the attached lease itself was never renewed item by item");
    }
  }

  @Test
  void aClientThatStopsLosesEveryAttachedLeaseTogetherAndTheClusterEndsThemWithTheSession()
      throws Exception {
    Partition pause = new Partition();
    try (LeaseholdClient client =
            Fixtures.client(
                cluster,
                b -> b.holder("runner-s2").sessionTtl(Duration.ofSeconds(3)).interceptor(pause));
        LeaseholdClient observer = Fixtures.client(cluster)) {
      Lease a = client.blocking().acquire("lock/s2-a", LeaseOptions.defaults());
      Lease b = client.blocking().acquire("lock/s2-b", LeaseOptions.defaults());
      TransitionRecorder ra = new TransitionRecorder();
      TransitionRecorder rb = new TransitionRecorder();
      a.addListener(ra);
      b.addListener(rb);
      long session = a.session();

      pause.cut();
      Fixtures.await(
          "both leases lost",
          Duration.ofSeconds(15),
          () -> ra.saw(LeaseState.LOST) && rb.saw(LeaseState.LOST));
      assertEquals(List.of(LeaseState.JEOPARDY, LeaseState.LOST), ra.states());
      assertEquals(List.of(LeaseState.JEOPARDY, LeaseState.LOST), rb.states());
      Fixtures.await(
          "the cluster ended both",
          Duration.ofSeconds(15),
          () ->
              observer.blocking().get("lock/s2-a").isEmpty()
                  && observer.blocking().get("lock/s2-b").isEmpty());
      EndedLease ended = observer.admin().history("lock/s2-a", 1).get(10, TimeUnit.SECONDS).get(0);
      assertEquals(EndReason.SESSION_EXPIRED, ended.reason());
      assertEquals(session, ended.session());
      assertEquals(Optional.of("session " + session), ended.message());
      assertTrue(observer.admin().session(session).get(10, TimeUnit.SECONDS).isEmpty());
      pause.heal();
    }
  }

  @Test
  void closingTheClientClosesItsSession() throws Exception {
    long session;
    try (LeaseholdClient client = Fixtures.client(cluster, b -> b.holder("runner-s3"))) {
      session = client.blocking().acquire("lock/s3", LeaseOptions.defaults()).session();
    }
    try (LeaseholdClient observer = Fixtures.client(cluster)) {
      assertTrue(observer.admin().session(session).get(10, TimeUnit.SECONDS).isEmpty());
      assertTrue(observer.blocking().get("lock/s3").isEmpty());
    }
  }

  @Test
  void withSessionsOffEveryLeaseHasItsOwnTtl() throws Exception {
    try (LeaseholdClient client = Fixtures.client(cluster, b -> b.sessions(false))) {
      Lease l = client.blocking().acquire("lock/s4", LeaseOptions.defaults());
      assertEquals(0, l.session());
      assertEquals(List.of(), client.admin().sessions(client.holder()).get(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void anOperatorClosingTheSessionEndsItsLeasesAndTheirHandles() throws Exception {
    try (LeaseholdClient client =
            Fixtures.client(cluster, b -> b.holder("runner-s5").sessionTtl(Duration.ofSeconds(3)));
        LeaseholdClient operator = Fixtures.client(cluster)) {
      Lease a = client.blocking().acquire("lock/s5", LeaseOptions.defaults());
      assertEquals(1L, operator.admin().closeSession(a.session()).get(10, TimeUnit.SECONDS));
      Fixtures.await(
          "the handle learnt it is gone",
          Duration.ofSeconds(10),
          () -> a.state() == LeaseState.LOST);
      assertEquals(Optional.of(LossReason.NOT_HELD), a.lossReason());
      assertEquals(
          EndReason.SESSION_CLOSED,
          operator.admin().history("lock/s5", 1).get(10, TimeUnit.SECONDS).get(0).reason());
      // The next acquisition gets a new session.
      Lease again = client.blocking().acquire("lock/s5b", LeaseOptions.defaults());
      assertNotEquals(0, again.session());
      assertNotEquals(a.session(), again.session());
    }
  }

  @Test
  void aTransferHandsTheNameOverAndTheOldTokenIsFencedOff() throws Exception {
    FencingGuard guard = new FencingGuard();
    try (LeaseholdClient alice = Fixtures.client(cluster, b -> b.holder("alice"));
        LeaseholdClient bob = Fixtures.client(cluster, b -> b.holder("bob"))) {
      Lease old = alice.blocking().acquire("partition/s6", LeaseOptions.defaults());
      guard.check("partition/s6", old.token());
      TransitionRecorder r = new TransitionRecorder();
      old.addListener(r);

      LeaseInfo moved = old.transferTo("bob").get(10, TimeUnit.SECONDS);
      assertEquals("bob", moved.holder());
      assertTrue(moved.token() > old.token());
      assertEquals(LeaseState.LOST, old.state());
      assertEquals(Optional.of(LossReason.TRANSFERRED), old.lossReason());
      // Listeners run on the callback pool, not necessarily before the future completes.
      Fixtures.await(
          "the listener heard of the loss", Duration.ofSeconds(10), () -> !r.states().isEmpty());
      assertEquals(List.of(LeaseState.LOST), r.states());

      guard.check("partition/s6", moved.token());
      assertThrows(StaleTokenException.class, () -> guard.check("partition/s6", old.token()));
      assertFalse(bob.checkToken("partition/s6", old.token()).get(10, TimeUnit.SECONDS));
      assertTrue(bob.checkToken("partition/s6", moved.token()).get(10, TimeUnit.SECONDS));
      assertEquals(
          EndReason.TRANSFERRED,
          bob.admin().history("partition/s6", 1).get(10, TimeUnit.SECONDS).get(0).reason());
      assertEquals(
          List.of("partition/s6"),
          bob.blocking().listHeldBy("bob", "partition/").leases().stream()
              .map(LeaseInfo::name)
              .toList());

      // Bob's client did not acquire it, so it has no handle: it takes the lease over by acquiring
      // it as its holder.
      Lease taken = bob.blocking().acquire("partition/s6", LeaseOptions.defaults());
      assertEquals(moved.token(), taken.token(), "the holder asking again gets the same lease");

      // The old token transfers nothing.
      assertEquals(
          Optional.empty(),
          alice
              .transfer("partition/s6", old.token(), "carol", Optional.empty())
              .get(10, TimeUnit.SECONDS));
      assertEquals("bob", bob.blocking().get("partition/s6").orElseThrow().holder());
    }
  }

  @Test
  void anOfferedLeaseMovesOnlyWhenTheNewHolderAccepts() throws Exception {
    try (LeaseholdClient alice = Fixtures.client(cluster, b -> b.holder("alice-o"));
        LeaseholdClient bob = Fixtures.client(cluster, b -> b.holder("bob-o"))) {
      Lease held = alice.blocking().acquire("partition/s7", LeaseOptions.defaults());
      long offer = held.offerTo("bob-o", Duration.ofSeconds(30)).get(10, TimeUnit.SECONDS);
      assertEquals(LeaseState.HELD, held.state(), "an offer leaves the lease where it is");
      assertEquals("alice-o", bob.blocking().get("partition/s7").orElseThrow().holder());

      Lease taken =
          bob.acceptTransfer("partition/s7", offer).get(10, TimeUnit.SECONDS).orElseThrow();
      assertEquals("bob-o", taken.holder());
      assertTrue(taken.token() > held.token());
      assertNotEquals(0, taken.session(), "taken up into the accepting client's session");
      Fixtures.await(
          "the offering handle learnt the lease moved",
          Duration.ofSeconds(15),
          () -> held.state() == LeaseState.LOST);
      assertEquals(
          Optional.empty(),
          bob.acceptTransfer("partition/s7", offer).get(10, TimeUnit.SECONDS),
          "an offer is taken once");
    }
  }

  @Test
  void anAttachedLeaseRevokedByAnOperatorIsLostAtTheNextKeepAlive() throws Exception {
    try (LeaseholdClient client =
            Fixtures.client(cluster, b -> b.holder("runner-s8").sessionTtl(Duration.ofSeconds(3)));
        LeaseholdClient operator = Fixtures.client(cluster)) {
      Lease kept = client.blocking().acquire("lock/s8-kept", LeaseOptions.defaults());
      Lease revoked = client.blocking().acquire("lock/s8-revoked", LeaseOptions.defaults());
      assertTrue(
          operator
              .admin()
              .revoke("lock/s8-revoked", "test", revoked.token())
              .get(10, TimeUnit.SECONDS)
              .isPresent());
      // The session itself stays alive: only the keep-alive's count of ended leases says one is
      // gone.
      Fixtures.await(
          "the revoked lease's handle is lost",
          Duration.ofSeconds(10),
          () -> revoked.state() == LeaseState.LOST);
      assertEquals(Optional.of(LossReason.NOT_HELD), revoked.lossReason());
      assertEquals(LeaseState.HELD, kept.state());
    }
  }
}
