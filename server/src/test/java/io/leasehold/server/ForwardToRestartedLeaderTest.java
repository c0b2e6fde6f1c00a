package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.TransferLeadershipRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node forwards writes to a member that was down while it forwarded to it and now leads again.
 * Forwarding through Ratis's client transport directly, the node left that member's connection
 * closed after the failures, and every later write forwarded there failed at once ("is closed")
 * until its deadline: the failover benchmark's kills that took 5 s.
 */
class ForwardToRestartedLeaderTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void writesForwardedToALeaderThatWasDownAndCameBackSucceed() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.requestTimeout(Duration.ofSeconds(20)));
    LeaseholdNode first = cluster.awaitLeader();
    String down = first.id();
    String forwarder = cluster.followers().get(0).id();
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(forwarder).acquire(acquire("lock/before", "h", 60)).getOutcome());
    cluster.awaitConverged();

    // The forwarder sends writes to the leader while it is gone; they may fail or, after a quick
    // election, succeed elsewhere: either way the forwarder's connection to it has failed.
    cluster.stopNode(down);
    LeasesGrpc.LeasesBlockingStub meanwhile =
        LeasesGrpc.newBlockingStub(cluster.channel(forwarder))
            .withDeadlineAfter(300, TimeUnit.MILLISECONDS);
    try {
      meanwhile.acquire(acquire("lock/meanwhile", "h", 60));
    } catch (StatusRuntimeException outage) {
      // no leader yet
    }

    LeaseholdNode interim = cluster.awaitLeader();
    cluster.startNode(down);
    cluster.awaitConverged();
    cluster
        .cluster(interim.id())
        .transferLeadership(TransferLeadershipRequest.newBuilder().setId(down).build());
    TestCluster.await(
        down + " leads again",
        Duration.ofSeconds(30),
        () -> cluster.leader().map(l -> l.id().equals(down)).orElse(false));

    LeasesGrpc.LeasesBlockingStub after =
        LeasesGrpc.newBlockingStub(cluster.channel(forwarder))
            .withDeadlineAfter(5, TimeUnit.SECONDS);
    for (int i = 0; i < 5; i++) {
      assertEquals(
          Outcome.GRANTED, after.acquire(acquire("lock/after-" + i, "h", 60)).getOutcome());
    }
  }
}
