package io.leasehold.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.server.TestCluster;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code leasehold backup} and {@code leasehold restore}, run as commands (registered in LeaseholdCommand separately). */
class BackupRestoreCommandTest {
  @TempDir
  Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  record Run(int exit, String out, String err) {}

  static Run run(Object command, String... args) {
    CommandLine cl = new CommandLine(command);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int exit = cl.execute(args);
    return new Run(exit, out.toString(), err.toString());
  }

  @Test
  void backupFromANodeThenRestoreIntoANewDataDir() throws Exception {
    cluster = TestCluster.start(1, dir.resolve("cluster"));
    cluster.leases("n1").acquire(AcquireRequest.newBuilder().setName("lock/cli").setHolder("me")
        .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(60)).build());
    Run backup = run(new BackupCommand(), dir.resolve("backup").toString(), "--endpoint", cluster.node("n1").clientAddress());
    assertEquals(0, backup.exit(), backup.err());
    assertTrue(backup.out().startsWith("backup of node n1 at term "), backup.out());

    Run again = run(new BackupCommand(), dir.resolve("backup").toString(), "--endpoint", cluster.node("n1").clientAddress());
    assertEquals(1, again.exit());
    assertTrue(again.err().contains("already holds a backup"), again.err());

    Run restore = run(new RestoreCommand(), "--from", dir.resolve("backup").toString(), "--data-dir", dir.resolve("new/n1").toString());
    assertEquals(0, restore.exit(), restore.err());
    assertTrue(Files.isDirectory(dir.resolve("new/n1/raft")));
    Run overwrite = run(new RestoreCommand(), "--from", dir.resolve("backup").toString(), "--data-dir", dir.resolve("new/n1").toString());
    assertEquals(1, overwrite.exit());
    assertTrue(overwrite.err().contains("not empty"), overwrite.err());
  }
}
