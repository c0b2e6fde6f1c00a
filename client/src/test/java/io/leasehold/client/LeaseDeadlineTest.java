package io.leasehold.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.CreateSessionRequest;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK's view of a lease's end: the deadline the leader acts on, and why the leader moved it.
 * The leases here are taken over the wire, with nothing to keep them alive, so that a new leader's
 * extension is not overtaken by a renewal.
 */
class LeaseDeadlineTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void readsShowTheLeadersDeadlineAndTheLeaderChangeThatExtendedIt() throws Exception {
    cluster = Fixtures.stableThreeNodes(dir);
    String entry = cluster.followers().get(0).id();
    cluster.leases(entry).acquire(Requests.acquire("lock/sdk", "runner-d", 30));
    long session =
        cluster
            .leases(entry)
            .createSession(
                CreateSessionRequest.newBuilder()
                    .setHolder("runner-d")
                    .setTtl(Requests.seconds(30))
                    .build())
            .getSession()
            .getId();
    cluster
        .leases(entry)
        .acquire(
            AcquireRequest.newBuilder()
                .setName("lock/sdk-s")
                .setHolder("runner-d")
                .setSession(session)
                .build());

    try (LeaseholdClient client = Fixtures.client(cluster)) {
      long asked = System.nanoTime();
      LeaseInfo before = client.blocking().get("lock/sdk").orElseThrow();
      long readMillis = Duration.ofNanos(System.nanoTime() - asked).toMillis() + 1;
      assertEquals(DeadlineSource.LEADER, before.deadlineSource());
      assertFalse(before.extended());
      // The time left is counted from when the leader was asked: the deadline shown may be early
      // by up to the read's round trip (a millisecond's rounding included), never later than 1 s.
      long sinceStamp =
          Duration.between(before.expiresAt(), before.deadline().orElseThrow()).toMillis();
      assertTrue(
          sinceStamp >= -readMillis && sinceStamp < 1_000,
          "counted from the grant: "
              + sinceStamp
              + " ms after the stamp, the read took "
              + readMillis
              + " ms");

      LeaseholdNode oldLeader = cluster.awaitLeader();
      cluster.awaitConverged();
      cluster.stopNode(oldLeader.id());
      LeaseholdNode leader = cluster.awaitLeader();
      long term = leader.ratis().division().getInfo().getCurrentTerm();

      LeaseInfo after =
          TestCluster.eventually(
              "the SDK reads the new leader's deadline",
              Duration.ofSeconds(20),
              () ->
                  client
                      .blocking()
                      .get("lock/sdk")
                      .filter(l -> l.deadlineSource() == DeadlineSource.LEADER && l.extended()));
      DeadlineExtension change = after.extensions().get(0);
      assertEquals(DeadlineExtension.Reason.LEADER_CHANGE, change.reason());
      assertEquals(term, change.term());
      assertEquals(before.expiresAt(), after.expiresAt(), "the stamp does not move");
      assertTrue(after.deadline().orElseThrow().isAfter(after.expiresAt()));
      assertEquals(
          Duration.between(after.expiresAt(), after.deadline().orElseThrow()).toMillis(),
          after.extensions().stream().mapToLong(e -> e.by().toMillis()).sum(),
          2.0,
          "by: from the stamp to the deadline");

      SessionInfo s =
          TestCluster.eventually(
              "the SDK reads the session's deadline",
              Duration.ofSeconds(20),
              () ->
                  client
                      .admin()
                      .session(session)
                      .join()
                      .map(SessionDetail::session)
                      .filter(
                          i ->
                              i.deadlineSource() == DeadlineSource.LEADER
                                  && !i.extensions().isEmpty()));
      assertEquals(DeadlineExtension.Reason.LEADER_CHANGE, s.extensions().get(0).reason());
      LeaseInfo attached = client.blocking().get("lock/sdk-s").orElseThrow();
      assertEquals(DeadlineSource.LEADER, attached.deadlineSource());
      long apart =
          Math.abs(
              Duration.between(attached.deadline().orElseThrow(), s.deadline().orElseThrow())
                  .toMillis());
      assertTrue(apart < 500, "an attached lease ends with its session: " + apart + " ms apart");
      assertEquals(Optional.empty(), client.blocking().get("lock/none"));
    }
  }
}
