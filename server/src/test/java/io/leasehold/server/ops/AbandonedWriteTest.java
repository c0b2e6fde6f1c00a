package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A write whose caller has given up is not resent. The node that took it used to keep resending it
 * to whichever node led, for its whole request timeout: the soak saw a registration the SDK had
 * abandoned (and then made again elsewhere) applied after the instance was deregistered.
 */
class AbandonedWriteTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aWriteWhoseCallerGaveUpIsNotAppliedOnceALeaderIsBack() throws Exception {
    cluster = TestCluster.start(3, dir, b -> b.requestTimeout(Duration.ofSeconds(20)));
    LeaseholdNode leader = cluster.awaitLeader();
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(leader.id()).acquire(acquire("lock/warm", "h", 60)).getOutcome());
    cluster.awaitConverged();
    // A follower left alone: it knows no leader and can reach no one.
    String alone = cluster.followers().get(0).id();
    List<String> others = cluster.ids().stream().filter(id -> !id.equals(alone)).toList();
    others.forEach(cluster::stopNode);

    LeasesGrpc.LeasesBlockingStub caller =
        LeasesGrpc.newBlockingStub(cluster.channel(alone)).withDeadlineAfter(1, TimeUnit.SECONDS);
    assertThrows(
        StatusRuntimeException.class, () -> caller.acquire(acquire("lock/abandoned", "h", 60)));

    for (String id : others) {
      cluster.startNode(id);
    }
    LeaseholdNode back = cluster.awaitLeader();
    assertEquals(
        Outcome.GRANTED,
        cluster.leases(back.id()).acquire(acquire("lock/after", "h", 60)).getOutcome());
    LeaseholdNode node = cluster.node(alone);
    TestCluster.await(
        "the abandoned write is no longer resent",
        Duration.ofSeconds(30),
        () -> node.replicator().pendingWrites() == 0);
    cluster.awaitConverged();
    assertFalse(
        cluster.leases(back.id()).get(get("lock/abandoned")).getFound(),
        "the abandoned acquisition was applied");
  }
}
