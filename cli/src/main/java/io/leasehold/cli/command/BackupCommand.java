package io.leasehold.cli.command;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.LeaseholdCommand;
import io.leasehold.proto.v1.BackupRequest;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.server.backup.NodeBackup;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code leasehold backup DIR}: a node takes a snapshot that includes every write acknowledged
 * before it, and streams it here; the backup is checked (size, MD5) before it is kept.
 */
@Command(
    name = "backup",
    mixinStandardHelpOptions = true,
    description = {
        "Takes a consistent backup of the cluster's state from one node into DIR (created; must hold no backup).",
        "Restore it with: leasehold restore --from DIR --data-dir NEW_DIR",
        ""},
    sortOptions = false)
public final class BackupCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "DIR", description = "Directory to write the backup into.")
  Path dir;

  @Option(names = {"-e", "--endpoint"}, paramLabel = "HOST:PORT", defaultValue = "${env:LEASEHOLD_ENDPOINT:-127.0.0.1:7400}",
      description = "The node to back up from (default: $LEASEHOLD_ENDPOINT or ${DEFAULT-VALUE}).")
  String endpoint;

  // Not --timeout: that is every command's per-request timeout (10s); a backup streams the whole state.
  @Option(names = "--backup-timeout", converter = DurationConverter.class, defaultValue = "5m",
      description = "How long the whole backup may take (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Override
  public Integer call() {
    ManagedChannel channel = ManagedChannelBuilder.forTarget(endpoint).usePlaintext().build();
    try {
      NodeBackup.Manifest m = NodeBackup.receive(ClusterGrpc.newBlockingStub(channel)
          .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
          .backup(BackupRequest.newBuilder()
              .setTimeout(com.google.protobuf.Duration.newBuilder().setSeconds(Math.max(1, timeout.toSeconds()))).build()), dir);
      spec.commandLine().getOut().printf("backup of node %s at term %d, index %d (%d bytes, md5 %s) written to %s%n",
          m.nodeId(), m.term(), m.index(), m.sizeBytes(), m.md5(), dir.toAbsolutePath());
      return LeaseholdCommand.EXIT_OK;
    } catch (StatusRuntimeException e) {
      spec.commandLine().getErr().println("leasehold backup: " + endpoint + ": " + e.getStatus().getCode()
          + (e.getStatus().getDescription() == null ? "" : ": " + e.getStatus().getDescription()));
      return e.getStatus().getCode() == io.grpc.Status.Code.UNAVAILABLE ? LeaseholdCommand.EXIT_UNREACHABLE : LeaseholdCommand.EXIT_FAILED;
    } catch (IOException e) {
      spec.commandLine().getErr().println("leasehold backup: " + e.getMessage());
      return LeaseholdCommand.EXIT_FAILED;
    } finally {
      channel.shutdownNow();
    }
  }
}
