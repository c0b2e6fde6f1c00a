package io.leasehold.server.ops;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.BackupChunk;
import io.leasehold.proto.v1.BackupHeader;
import io.leasehold.proto.v1.BackupRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.TestCluster;
import io.leasehold.server.backup.NodeBackup;
import io.leasehold.statemachine.core.LogFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backup taken online from one node restores a whole cluster: every lease, with its token, and
 * tokens keep increasing.
 */
class BackupRestoreTest {
  @TempDir Path dir;
  TestCluster original;
  TestCluster restored;

  @AfterEach
  void stop() {
    if (original != null) {
      original.close();
    }
    if (restored != null) {
      restored.close();
    }
  }

  @Test
  void aBackupFromOneNodeRestoresEveryMemberOfALostCluster() throws Exception {
    original = TestCluster.start(3, dir.resolve("original"));
    String follower = original.followers().get(0).id();
    Map<String, Long> tokens = new HashMap<>();
    long lastGrant = 0;
    for (int i = 0; i < 25; i++) {
      AcquireResponse r =
          original.leases(follower).acquire(acquire("lock/job-" + i, "runner-" + i, 600));
      tokens.put("lock/job-" + i, r.getLease().getToken());
      lastGrant = Math.max(lastGrant, r.getRevision());
    }
    long maxToken = tokens.values().stream().mapToLong(Long::longValue).max().orElseThrow();

    Path backup = dir.resolve("backup");
    NodeBackup.Manifest m =
        NodeBackup.receive(
            original.cluster(follower).backup(BackupRequest.getDefaultInstance()), backup);
    assertEquals(follower, m.nodeId());
    assertTrue(m.index() >= lastGrant, "the backup includes every grant: " + m);
    assertEquals(m, NodeBackup.verify(backup));
    original.close();
    original = null;

    Path restoredData = dir.resolve("restored");
    for (String id : new String[] {"n1", "n2", "n3"}) {
      NodeBackup.restore(backup, restoredData.resolve(id), NodeConfig.DEFAULT_CLUSTER_NAME);
    }
    assertThrows(
        IOException.class,
        () ->
            NodeBackup.restore(backup, restoredData.resolve("n1"), NodeConfig.DEFAULT_CLUSTER_NAME),
        "never over an existing data directory");
    restored = TestCluster.start(3, restoredData);
    restored.awaitConverged();
    for (String id : restored.ids()) {
      for (Map.Entry<String, Long> e : tokens.entrySet()) {
        var r = restored.leases(id).get(get(e.getKey()));
        assertTrue(r.getFound(), e.getKey() + " restored on " + id);
        assertEquals(e.getValue(), r.getLease().getToken());
      }
    }
    AcquireResponse fresh =
        restored.leases("n2").acquire(acquire("lock/after-restore", "runner-x", 60));
    assertEquals(Outcome.GRANTED, fresh.getOutcome());
    assertTrue(
        fresh.getLease().getToken() > maxToken, "tokens continue above every token in the backup");
    assertTrue(fresh.getRevision() > m.index(), "the log continues after the backup's position");
  }

  @Test
  void aFreshClusterStoresItsLogFormatAndABackupCarriesIt() throws Exception {
    original = TestCluster.start(1, dir.resolve("original"));
    LeaseholdNode n1 = original.awaitLeader();
    TestCluster.await(
        "the leader raised the log format",
        Duration.ofSeconds(20),
        () -> n1.stateMachine().core().logFormat() == LogFormat.NEWEST);
    Path backup = dir.resolve("backup");
    NodeBackup.Manifest m =
        NodeBackup.receive(
            original.cluster("n1").backup(BackupRequest.getDefaultInstance()), backup);
    assertTrue(m.index() >= 1, "the format switch is a write: " + m);
    original.close();
    original = null;

    NodeBackup.restore(
        backup, dir.resolve("restored").resolve("n1"), NodeConfig.DEFAULT_CLUSTER_NAME);
    restored = TestCluster.start(1, dir.resolve("restored"));
    LeaseholdNode r1 = restored.awaitLeader();
    assertEquals(
        LogFormat.NEWEST,
        r1.stateMachine().core().logFormat(),
        "the restored node starts in the cluster's format");
    AcquireResponse a = restored.leases("n1").acquire(acquire("lock/x", "h", 60));
    assertEquals(
        LogFormat.token(LogFormat.NEWEST, a.getRevision(), 0),
        a.getLease().getToken(),
        "the token derives from the entry's index, as the cluster's format says");
  }

  @Test
  void aStreamCutOffMidwayLeavesNoPartialFile() throws Exception {
    Path backup = dir.resolve("cut");
    BackupChunk header =
        BackupChunk.newBuilder()
            .setHeader(
                BackupHeader.newBuilder().setNodeId("n1").setTerm(1).setIndex(7).setSizeBytes(2))
            .setData(ByteString.copyFromUtf8("x"))
            .build();
    Iterator<BackupChunk> cut =
        new Iterator<>() {
          boolean sent;

          @Override
          public boolean hasNext() {
            if (sent) {
              throw Status.UNAVAILABLE.withDescription("the node stopped").asRuntimeException();
            }
            return true;
          }

          @Override
          public BackupChunk next() {
            sent = true;
            return header;
          }
        };
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> NodeBackup.receive(cut, backup));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    try (Stream<Path> left = Files.list(backup)) {
      assertEquals(
          List.of(), left.toList(), "nothing left behind for the next attempt to trip over");
    }
  }

  @Test
  void aDamagedBackupIsRefused() throws Exception {
    original = TestCluster.start(1, dir.resolve("original"));
    original.leases("n1").acquire(acquire("lock/a", "runner", 60));
    Path backup = dir.resolve("backup");
    NodeBackup.Manifest m =
        NodeBackup.receive(
            original.cluster("n1").backup(BackupRequest.getDefaultInstance()), backup);
    byte[] bytes = Files.readAllBytes(backup.resolve(m.file()));
    bytes[bytes.length / 2] ^= 1;
    Files.write(backup.resolve(m.file()), bytes);
    IOException e =
        assertThrows(
            IOException.class,
            () ->
                NodeBackup.restore(backup, dir.resolve("target"), NodeConfig.DEFAULT_CLUSTER_NAME));
    assertTrue(e.getMessage().contains("MD5"), e.getMessage());
    assertTrue(!Files.exists(dir.resolve("target")), "nothing written");
  }
}
