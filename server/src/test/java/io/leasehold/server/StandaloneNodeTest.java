package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static io.leasehold.server.Requests.list;
import static io.leasehold.server.Requests.release;
import static io.leasehold.server.Requests.renew;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StandaloneNodeTest {
  @TempDir Path dir;
  TestCluster cluster;
  LeasesGrpc.LeasesBlockingStub leases;

  @BeforeEach
  void start() throws Exception {
    cluster = TestCluster.start(1, dir);
    leases = cluster.leases("n1");
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void acquireRenewGetListReleaseOverGrpc() {
    AcquireResponse granted = leases.acquire(acquire("lock/job", "runner-1", 30));
    assertEquals(Outcome.GRANTED, granted.getOutcome());
    long token = granted.getLease().getToken();
    assertEquals(
        granted.getRevision() * 4096,
        token,
        "the token is the granting entry's index times 4096 (it is alone in the entry)");
    assertEquals(
        10, granted.getHeartbeatInterval().getSeconds(), "a third of the TTL is suggested");

    AcquireResponse conflict = leases.acquire(acquire("lock/job", "runner-2", 30));
    assertEquals(Outcome.CONFLICT, conflict.getOutcome());
    assertEquals("runner-1", conflict.getConflict().getHolder());
    assertEquals(token, conflict.getConflict().getToken());
    assertTrue(conflict.getConflict().getRemaining().getSeconds() > 20);

    assertEquals(
        Outcome.RENEWED, leases.renew(renew("lock/job", token)).getResults(0).getOutcome());
    var lease = leases.get(get("lock/job"));
    assertTrue(lease.getFound());
    assertEquals(1, lease.getLease().getRenewCount());
    assertTrue(lease.getRevision() >= granted.getRevision(), "the read reflects the grant");

    ListResponse listed = leases.list(list("lock/"));
    assertEquals(1, listed.getLeasesCount());
    assertTrue(listed.getRevision() >= granted.getRevision());

    assertEquals(Outcome.RELEASED, leases.release(release("lock/job", token)).getOutcome());
    assertFalse(leases.get(get("lock/job")).getFound());
    AcquireResponse again = leases.acquire(acquire("lock/job", "runner-2", 30));
    assertTrue(again.getLease().getToken() > token, "a new grant gets a larger token");
  }

  @Test
  void statusReportsASingleLeader() {
    StatusResponse status = cluster.cluster("n1").status(StatusRequest.getDefaultInstance());
    assertEquals("n1", status.getId());
    assertEquals(Role.LEADER, status.getRole());
    assertEquals("n1", status.getLeaderId());
    assertEquals(cluster.node("n1").clientAddress(), status.getLeaderClientAddress());
    assertEquals(1, status.getMembersCount());
    assertTrue(status.getTerm() >= 1);
    assertTrue(status.getAppliedIndex() >= 0);
  }

  @Test
  void aTakenRaftPortFailsTheStartWithTheReasonAndLeavesTheJvmRunning(@TempDir Path other)
      throws Exception {
    Peer taken =
        new Peer("n1", "127.0.0.1", cluster.peer("n1").peerPort(), TestCluster.freePorts(1)[0]);
    NodeConfig config =
        NodeConfig.builder()
            .id("n1")
            .peers(java.util.List.of(taken))
            .dataDir(other.resolve("n1"))
            .build();
    java.io.IOException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            java.io.IOException.class, () -> LeaseholdNode.start(config));
    assertTrue(e.getMessage().contains("Raft port 127.0.0.1:" + taken.peerPort()), e::getMessage);
    assertEquals(
        Outcome.GRANTED,
        leases.acquire(acquire("still/here", "runner-1", 30)).getOutcome(),
        "the running node is untouched");
  }
}
