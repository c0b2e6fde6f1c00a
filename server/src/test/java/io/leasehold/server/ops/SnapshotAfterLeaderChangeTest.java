package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.BackupChunk;
import io.leasehold.proto.v1.BackupRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.TakeSnapshotRequest;
import io.leasehold.proto.v1.TakeSnapshotResponse;
import io.leasehold.proto.v1.TransferLeadershipRequest;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot asked for after a leader change (or any entry that is not a write: a new leader's
 * first entry, a configuration) comes at once. It used to wait for a snapshot at the node's last
 * applied log index, which only writes move the state to: on a cluster with no write since the
 * change, TakeSnapshot and Backup waited out their whole timeout (60 s) and failed. Found by the
 * API fuzz test.
 */
class SnapshotAfterLeaderChangeTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void takeSnapshotAndBackupAnswerAtOnceAfterALeaderChange() throws Exception {
    cluster = TestCluster.start(3, dir);
    AcquireResponse granted = cluster.leases("n1").acquire(acquire("lock/a", "runner-1", 600));
    assertEquals(Outcome.GRANTED, granted.getOutcome());
    LeaseholdNode leader = cluster.awaitLeader();
    String next = cluster.followers().get(0).id();
    cluster
        .cluster(leader.id())
        .transferLeadership(TransferLeadershipRequest.newBuilder().setId(next).build());
    TestCluster.await(
        "a ready leader " + next,
        Duration.ofSeconds(30),
        () ->
            cluster.node(next).isLeader()
                && cluster.node(next).diagnostics().ticker().scheduler().isActive());
    cluster.awaitConverged();
    for (String id : cluster.ids()) {
      long started = System.nanoTime();
      TakeSnapshotResponse s =
          cluster
              .cluster(id)
              .withDeadlineAfter(10, TimeUnit.SECONDS)
              .takeSnapshot(TakeSnapshotRequest.getDefaultInstance());
      assertTrue(
          s.getIndex() >= granted.getRevision(), id + ": the snapshot includes the grant: " + s);
      Iterator<BackupChunk> chunks =
          cluster
              .cluster(id)
              .withDeadlineAfter(10, TimeUnit.SECONDS)
              .backup(BackupRequest.getDefaultInstance());
      assertTrue(chunks.next().hasHeader(), id + ": a backup starts with its header");
      chunks.forEachRemaining(c -> {});
      long millis = (System.nanoTime() - started) / 1_000_000;
      assertTrue(millis < 5_000, id + ": a snapshot and a backup took " + millis + " ms");
    }
  }
}
