package io.leasehold.cli.command;

import io.leasehold.cli.LeaseholdCommand;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.backup.NodeBackup;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code leasehold restore}: turns a backup into a node's data directory, offline. Start the node
 * on it afterwards with the usual options; for a whole cluster, restore the same backup for every
 * member.
 */
@Command(
    name = "restore",
    mixinStandardHelpOptions = true,
    description = {
      "Writes a new data directory that starts from a backup (see leasehold backup). Offline: the node must not run.",
      "To rebuild a lost cluster, restore the same backup into each member's data dir, then start every member",
      "with its usual --id and --peers.",
      ""
    },
    sortOptions = false)
public final class RestoreCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--from",
      required = true,
      paramLabel = "BACKUP_DIR",
      description = "A directory written by leasehold backup.")
  Path from;

  @Option(
      names = "--data-dir",
      required = true,
      paramLabel = "DIR",
      description = "The node's new data directory (must not exist or be empty).")
  Path dataDir;

  @Option(
      names = "--cluster-name",
      defaultValue = NodeConfig.DEFAULT_CLUSTER_NAME,
      description =
          "The cluster the node will run in; as given to leasehold server (default: ${DEFAULT-VALUE}).")
  String clusterName;

  @Override
  public Integer call() {
    try {
      NodeBackup.Manifest m = NodeBackup.restore(from, dataDir, clusterName);
      spec.commandLine()
          .getOut()
          .printf(
              "restored %s (node %s, term %d, index %d, taken %s) into %s%n",
              from, m.nodeId(), m.term(), m.index(), m.takenAt(), dataDir.toAbsolutePath());
      return LeaseholdCommand.EXIT_OK;
    } catch (IOException e) {
      spec.commandLine().getErr().println("leasehold restore: " + e.getMessage());
      return LeaseholdCommand.EXIT_FAILED;
    }
  }
}
