package io.leasehold.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.cli.Cli;
import io.leasehold.cli.Cli.Run;
import io.leasehold.cli.LeaseholdCommand;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.TestCluster;
import io.leasehold.server.raft.RaftConsensus;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code leasehold backup} and {@code leasehold restore}, run as commands (registered in
 * LeaseholdCommand separately).
 */
class BackupRestoreCommandTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static Run run(Object command, String... args) {
    return Cli.run(new CommandLine(command), args);
  }

  /** The whole {@code leasehold} command, global options included. */
  static Run leasehold(String... args) {
    return Cli.run(args);
  }

  static String unreachable() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return "127.0.0.1:" + s.getLocalPort(); // free, so nothing listens there once closed
    }
  }

  static void assertOneLine(Run r, int exit, String text) {
    assertEquals(exit, r.exit(), r.toString());
    assertEquals(1, r.err().strip().lines().count(), r.toString());
    assertTrue(r.err().startsWith("leasehold backup: ") && r.err().contains(text), r.toString());
  }

  @Test
  void aNodeThatAcceptsButNeverAnswersIsPassedOverWithinTheProbeTimeout() throws Exception {
    cluster = TestCluster.start(1, dir.resolve("cluster"));
    cluster
        .leases("n1")
        .acquire(
            AcquireRequest.newBuilder()
                .setName("lock/silent")
                .setHolder("me")
                .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(60))
                .build());
    // Accepts connections and never says a word, like a hung process.
    try (ServerSocket silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      List<java.net.Socket> held = new java.util.concurrent.CopyOnWriteArrayList<>();
      Thread acceptor =
          new Thread(
              () -> {
                try {
                  while (true) {
                    held.add(silent.accept());
                  }
                } catch (IOException closed) {
                  // the test is over
                }
              });
      acceptor.setDaemon(true);
      acceptor.start();
      long start = System.nanoTime();
      Run r =
          leasehold(
              "--endpoints",
              "127.0.0.1:" + silent.getLocalPort() + "," + cluster.node("n1").clientAddress(),
              "backup",
              dir.resolve("b").toString());
      long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
      assertEquals(0, r.exit(), r.toString());
      assertFalse(held.isEmpty(), "the silent node was tried first");
      assertTrue(
          seconds < BackupCommand.PROBE_TIMEOUT.toSeconds() + 20,
          "passed over after the probe's "
              + BackupCommand.PROBE_TIMEOUT
              + ", not the backup's 5m: took "
              + seconds
              + " s");
      for (java.net.Socket s : held) {
        s.close();
      }
    }
  }

  @Test
  void backupWithoutEndpointTakesTheFirstOfTheGlobalEndpointsThatAnswers() throws Exception {
    cluster = TestCluster.start(1, dir.resolve("cluster"));
    // A cluster that has applied nothing yet has nothing to back up (FAILED_PRECONDITION).
    cluster
        .leases("n1")
        .acquire(
            AcquireRequest.newBuilder()
                .setName("lock/global")
                .setHolder("me")
                .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(60))
                .build());
    String live = cluster.node("n1").clientAddress();
    String nowhere = unreachable();

    Run viaGlobal =
        leasehold("--endpoints", nowhere + "," + live, "backup", dir.resolve("b1").toString());
    assertEquals(0, viaGlobal.exit(), viaGlobal.toString());
    assertTrue(viaGlobal.out().startsWith("backup of node n1 at term "), viaGlobal.out());

    Run after = leasehold("backup", dir.resolve("b2").toString(), "--endpoints", live);
    assertEquals(0, after.exit(), "--endpoints after the command name too: " + after);

    Run endpointWins =
        leasehold(
            "--endpoints", nowhere, "backup", dir.resolve("b3").toString(), "--endpoint", live);
    assertEquals(0, endpointWins.exit(), "--endpoint names the one node: " + endpointWins);

    String nowhereElse = unreachable();
    assertOneLine(
        leasehold(
            "--endpoints", nowhere + "," + nowhereElse, "backup", dir.resolve("b4").toString()),
        LeaseholdCommand.EXIT_UNREACHABLE,
        "no node answered at " + nowhere + "," + nowhereElse + " (last error UNAVAILABLE");
  }

  @Test
  void backupRefusesTheGlobalTimeoutAndAMalformedEndpoint() {
    for (String[] args :
        List.of(
            new String[] {"--timeout", "1s", "backup", dir.resolve("b").toString()},
            new String[] {"backup", dir.resolve("b").toString(), "--timeout", "1s"})) {
      Run r = leasehold(args);
      assertOneLine(
          r,
          LeaseholdCommand.EXIT_USAGE,
          "--timeout: backup does not use it; --backup-timeout (default 5m) bounds the whole backup");
    }
    assertOneLine(
        leasehold("--endpoints", "localhost", "backup", dir.resolve("b").toString()),
        LeaseholdCommand.EXIT_USAGE,
        "--endpoints: 'localhost' is not host:port");
    assertOneLine(
        leasehold("backup", dir.resolve("b").toString(), "--endpoint", "localhost"),
        LeaseholdCommand.EXIT_USAGE,
        "--endpoint: 'localhost' is not host:port");
    assertTrue(!Files.exists(dir.resolve("b")), "nothing is written after a usage error");
  }

  @Test
  void backupFromANodeThenRestoreIntoANewDataDir() throws Exception {
    cluster = TestCluster.start(1, dir.resolve("cluster"));
    cluster
        .leases("n1")
        .acquire(
            AcquireRequest.newBuilder()
                .setName("lock/cli")
                .setHolder("me")
                .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(60))
                .build());
    Run backup =
        run(
            new BackupCommand(),
            dir.resolve("backup").toString(),
            "--endpoint",
            cluster.node("n1").clientAddress());
    assertEquals(0, backup.exit(), backup.err());
    assertTrue(backup.out().startsWith("backup of node n1 at term "), backup.out());

    Run again =
        run(
            new BackupCommand(),
            dir.resolve("backup").toString(),
            "--endpoint",
            cluster.node("n1").clientAddress());
    assertEquals(1, again.exit());
    assertTrue(again.err().contains("already holds a backup"), again.err());

    Run restore =
        run(
            new RestoreCommand(),
            "--from",
            dir.resolve("backup").toString(),
            "--data-dir",
            dir.resolve("new/n1").toString());
    assertEquals(0, restore.exit(), restore.err());
    assertTrue(Files.isDirectory(dir.resolve("new/n1/raft")));
    Run overwrite =
        run(
            new RestoreCommand(),
            "--from",
            dir.resolve("backup").toString(),
            "--data-dir",
            dir.resolve("new/n1").toString());
    assertEquals(1, overwrite.exit());
    assertTrue(overwrite.err().contains("not empty"), overwrite.err());
  }

  @Test
  void aBackupWithLeaseGroupsIsRestoredWithThePeersTheNodesStartWith() throws Exception {
    cluster = TestCluster.start(1, dir.resolve("cluster"), b -> b.leaseGroups(2));
    TestCluster.await(
        "both lease groups applied a write (a copy of the global state)",
        Duration.ofSeconds(60),
        () -> {
          var cores = cluster.node("n1").consensus().leaseGroupCores();
          return cores.size() == 2 && cores.values().stream().allMatch(c -> c.globalVersion() > 0);
        });
    Run backup =
        run(
            new BackupCommand(),
            dir.resolve("backup").toString(),
            "--endpoint",
            cluster.node("n1").clientAddress());
    assertEquals(0, backup.exit(), backup.toString());
    assertTrue(backup.out().contains("\n  lease group 1 at term "), backup.out());
    assertTrue(backup.out().contains("\n  lease group 2 at term "), backup.out());

    Path target = dir.resolve("new/n1");
    java.util.function.Function<String[], Run> restoreTo =
        peers -> {
          List<String> args =
              new java.util.ArrayList<>(
                  List.of("--from", dir.resolve("backup").toString(), "--data-dir", "" + target));
          args.addAll(List.of(peers));
          return run(new RestoreCommand(), args.toArray(String[]::new));
        };
    Run noPeers = restoreTo.apply(new String[0]);
    assertEquals(LeaseholdCommand.EXIT_FAILED, noPeers.exit(), noPeers.toString());
    assertTrue(noPeers.err().startsWith("leasehold restore: --peers: "), noPeers.toString());
    assertFalse(Files.exists(target), "nothing written without the members");

    Run badPeers = restoreTo.apply(new String[] {"--peers", "n1"});
    assertTrue(badPeers.exit() != 0, badPeers.toString());
    assertTrue(badPeers.err().contains("--peers: peer \"n1\""), badPeers.toString());
    assertFalse(Files.exists(target), "nothing written after a usage error");

    Run restore = restoreTo.apply(new String[] {"--peers", "n1=127.0.0.1:7401:7400"});
    assertEquals(0, restore.exit(), restore.toString());
    assertTrue(
        restore.out().contains("\n  lease group 2 at term ")
            && restore.out().contains("members n1"),
        restore.out());
    for (int group : new int[] {1, 2}) {
      Path current =
          target
              .resolve("raft")
              .resolve(
                  RaftConsensus.leaseGroupUuid(NodeConfig.DEFAULT_CLUSTER_NAME, group).toString())
              .resolve("current");
      assertTrue(Files.isRegularFile(current.resolve("raft-meta.conf")), current.toString());
    }
  }

  @Test
  void aBackupOfLeaseGroupsOnSubsetsIsTakenFromTheirMembersAndEachNodeGetsItsOwn()
      throws Exception {
    Duration wait = Duration.ofSeconds(60);
    // Five nodes, lease group 1 on n1-n3, lease group 2 on n4, n5 and n1: no node but n1 hosts
    // both, and the backup is asked of n4, which hosts group 2 only.
    cluster =
        TestCluster.start(5, dir.resolve("original"), b -> b.leaseGroups(2).leaseGroupSize(3));
    TestCluster.await(
        "every node knows the meta group's leader",
        wait,
        () -> cluster.running().stream().allMatch(n -> n.consensus().leaderId().isPresent()));
    java.util.Map<String, Long> tokens = new java.util.TreeMap<>();
    for (String ns : List.of("alpha", "beta")) {
      for (int i = 0; i < 3; i++) {
        String name = ns + "/job-" + i;
        var r =
            cluster.acquireRetrying(
                "n" + (2 + i),
                AcquireRequest.newBuilder()
                    .setName(name)
                    .setHolder("runner-" + i)
                    .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(600))
                    .build(),
                wait);
        tokens.put(name, r.getLease().getToken());
      }
    }
    cluster
        .cluster("n1")
        .moveNamespace(
            io.leasehold.proto.v1.MoveNamespaceRequest.newBuilder()
                .setNamespace("alpha")
                .setToGroup(1)
                .build());
    cluster
        .cluster("n1")
        .moveNamespace(
            io.leasehold.proto.v1.MoveNamespaceRequest.newBuilder()
                .setNamespace("beta")
                .setToGroup(2)
                .build());

    Path backupDir = dir.resolve("backup");
    Run backup =
        run(
            new BackupCommand(),
            backupDir.toString(),
            "--endpoint",
            cluster.node("n4").clientAddress());
    assertEquals(0, backup.exit(), backup.toString());
    io.leasehold.server.backup.NodeBackup.Manifest m =
        io.leasehold.server.backup.NodeBackup.verify(backupDir);
    assertEquals(3, m.leaseGroupSize(), m.toString());
    assertEquals(
        List.of(1, 2),
        m.leaseGroups().stream()
            .map(io.leasehold.server.backup.NodeBackup.GroupFile::number)
            .toList(),
        m.toString());
    List<io.leasehold.server.Peer> peers = cluster.ids().stream().map(cluster::peer).toList();
    String peerList =
        String.join(
            ",",
            peers.stream()
                .map(p -> p.id() + "=127.0.0.1:" + p.peerPort() + ":" + p.clientPort())
                .toList());
    cluster.close();
    cluster = null;

    Path restored = dir.resolve("restored");
    Run noId =
        run(
            new RestoreCommand(),
            "--from",
            backupDir.toString(),
            "--data-dir",
            restored.resolve("n1").toString(),
            "--peers",
            peerList);
    assertEquals(LeaseholdCommand.EXIT_FAILED, noId.exit(), noId.toString());
    assertTrue(noId.err().startsWith("leasehold restore: --id: "), noId.toString());
    for (io.leasehold.server.Peer p : peers) {
      Run restore =
          run(
              new RestoreCommand(),
              "--from",
              backupDir.toString(),
              "--data-dir",
              restored.resolve(p.id()).toString(),
              "--peers",
              peerList,
              "--id",
              p.id());
      assertEquals(0, restore.exit(), restore.toString());
    }
    // Each node holds its own lease groups only.
    for (String id : List.of("n2", "n4")) {
      int own = id.equals("n2") ? 1 : 2;
      int other = 3 - own;
      Path raft = restored.resolve(id).resolve("raft");
      assertTrue(Files.isDirectory(raft.resolve(groupUuid(own))), id + " holds group " + own);
      assertFalse(Files.exists(raft.resolve(groupUuid(other))), id + " holds no group " + other);
    }

    cluster = TestCluster.start(5, restored, b -> b.leaseGroups(2).leaseGroupSize(3).peers(peers));
    for (String id : cluster.ids()) {
      for (java.util.Map.Entry<String, Long> e : tokens.entrySet()) {
        var got =
            TestCluster.eventually(
                e.getKey() + " read through " + id,
                wait,
                () -> {
                  try {
                    return java.util.Optional.of(
                        cluster
                            .leases(id)
                            .get(
                                io.leasehold.proto.v1.GetRequest.newBuilder()
                                    .setName(e.getKey())
                                    .build()));
                  } catch (io.grpc.StatusRuntimeException unavailable) {
                    return java.util.Optional.empty();
                  }
                });
        assertTrue(got.getFound(), () -> e.getKey() + " restored, read through " + id);
        assertEquals(e.getValue(), got.getLease().getToken(), e.getKey());
      }
    }
  }

  private static String groupUuid(int group) {
    return RaftConsensus.leaseGroupUuid(NodeConfig.DEFAULT_CLUSTER_NAME, group).toString();
  }
}
