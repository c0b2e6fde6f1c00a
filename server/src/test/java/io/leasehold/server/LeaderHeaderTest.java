package io.leasehold.server;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.staleGet;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.rpc.GrpcErrors;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A follower's responses name the leader in the leasehold-leader header; the leader's name nobody.
 */
class LeaderHeaderTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void close() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aFollowersAnswersCarryTheLeadersAddress() throws Exception {
    cluster = TestCluster.start(3, dir);
    LeaseholdNode leader = cluster.awaitLeader();
    LeaseholdNode follower = cluster.followers().get(0);

    AtomicReference<Metadata> headers = new AtomicReference<>();
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    var viaFollower =
        cluster
            .leases(follower.id())
            .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
    assertEquals(
        Outcome.GRANTED, viaFollower.acquire(acquire("lock/header", "runner-h", 60)).getOutcome());
    assertEquals(
        leader.clientAddress(),
        headers.get().get(GrpcErrors.LEADER_HINT),
        "a write forwarded by a follower");
    viaFollower.get(staleGet("lock/header"));
    assertEquals(
        leader.clientAddress(),
        headers.get().get(GrpcErrors.LEADER_HINT),
        "a read a follower answers itself");

    var viaLeader =
        cluster
            .leases(leader.id())
            .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
    viaLeader.get(staleGet("lock/header"));
    assertNull(headers.get().get(GrpcErrors.LEADER_HINT), "the leader names nobody");
  }
}
