package io.leasehold.cli.command;

import io.leasehold.cli.LeaseholdCommand;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.Peer;
import io.leasehold.server.backup.NodeBackup;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
      "with its usual --id and --peers. A backup with lease groups also needs --peers here.",
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

  @Option(
      names = "--peers",
      paramLabel = "ID=HOST:PEER_PORT:CLIENT_PORT,...",
      description = {
        "Every member of the cluster, as the nodes will start with (--peers of leasehold server; for a",
        "--standalone node, n1=127.0.0.1:7401:7400 with its ports). Needed for a backup with lease groups:",
        "each is restored with these members. Also from LEASEHOLD_PEERS."
      },
      defaultValue = "${env:LEASEHOLD_PEERS}")
  String peers;

  @Option(
      names = "--id",
      paramLabel = "ID",
      description = {
        "The id of the node this data directory is for. Needed for a backup whose lease groups sat on",
        "subsets of the nodes (--lease-group-size): each node gets the lease groups it forms with."
      })
  String id;

  @Override
  public Integer call() {
    List<Peer> members = new ArrayList<>();
    if (peers != null) {
      try {
        for (String part : peers.split(",")) {
          if (!part.isBlank()) {
            members.add(Peer.parse(part.trim()));
          }
        }
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--peers: " + e.getMessage());
      }
    }
    try {
      NodeBackup.Manifest m =
          NodeBackup.restore(
              from, dataDir, clusterName, members, java.util.Optional.ofNullable(id));
      spec.commandLine()
          .getOut()
          .printf(
              "restored %s (node %s, term %d, index %d, taken %s) into %s%n",
              from, m.nodeId(), m.term(), m.index(), m.takenAt(), dataDir.toAbsolutePath());
      for (NodeBackup.GroupFile g : m.leaseGroups()) {
        if (m.leaseGroupSize() > 0
            && !io.leasehold.server.raft.RaftConsensus.formsLeaseGroup(
                members, g.number(), m.leaseGroupSize(), id)) {
          continue;
        }
        spec.commandLine()
            .getOut()
            .printf(
                "  lease group %d at term %d, index %d, members %s%n",
                g.number(),
                g.term(),
                g.index(),
                String.join(
                    ",",
                    members.stream()
                        .map(Peer::id)
                        .filter(
                            p ->
                                io.leasehold.server.raft.RaftConsensus.formsLeaseGroup(
                                    members, g.number(), m.leaseGroupSize(), p))
                        .toList()));
      }
      return LeaseholdCommand.EXIT_OK;
    } catch (IOException e) {
      spec.commandLine().getErr().println("leasehold restore: " + e.getMessage());
      return LeaseholdCommand.EXIT_FAILED;
    }
  }
}
