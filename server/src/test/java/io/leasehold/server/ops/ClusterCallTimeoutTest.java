package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Duration;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.BackupRequest;
import io.leasehold.proto.v1.TakeSnapshotRequest;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot or backup whose timeout runs out says what it waited for. With a timeout under a
 * millisecond the wait to catch up with the leader ran out with an exception without a message, and
 * the call failed with DEADLINE_EXCEEDED and no description. Found by the API fuzz test.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterCallTimeoutTest {
  TestCluster cluster;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    cluster = TestCluster.start(3, dir);
    cluster.leases("n1").acquire(acquire("lock/a", "runner-1", 600));
  }

  @AfterAll
  void stop() {
    cluster.close();
  }

  @Test
  void aTakeSnapshotThatRunsOutOfTimeSaysWhy() {
    Duration tiny = Duration.newBuilder().setNanos(1).build();
    for (String id : cluster.ids()) {
      try {
        cluster.cluster(id).takeSnapshot(TakeSnapshotRequest.newBuilder().setTimeout(tiny).build());
      } catch (StatusRuntimeException e) {
        assertTimedOutSayingWhy(id, e);
      }
    }
  }

  @Test
  void aBackupThatRunsOutOfTimeSaysWhy() {
    Duration tiny = Duration.newBuilder().setNanos(1).build();
    for (String id : cluster.ids()) {
      try {
        cluster
            .cluster(id)
            .backup(BackupRequest.newBuilder().setTimeout(tiny).build())
            .forEachRemaining(c -> {});
      } catch (StatusRuntimeException e) {
        assertTimedOutSayingWhy(id, e);
      }
    }
  }

  private static void assertTimedOutSayingWhy(String id, StatusRuntimeException e) {
    assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode(), id + ": " + e);
    String why = e.getStatus().getDescription();
    assertTrue(
        why != null && why.contains("timed out"),
        id + ": the description says what timed out: " + why);
  }
}
