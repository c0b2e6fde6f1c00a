package io.leasehold.cli.command;

import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.view.ClusterView;
import io.leasehold.client.ClusterStatus;
import io.leasehold.client.LeaseholdClient;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code leasehold cluster …}. */
@Command(name = "cluster", mixinStandardHelpOptions = true, description = "The cluster's members.",
    subcommands = {ClusterCommand.Status.class})
public final class ClusterCommand implements Runnable {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required: status");
  }

  @Command(name = "status", mixinStandardHelpOptions = true,
      description = {"Asks every member for its own status: id, client address, role, term, commit and applied index,",
          "lag (entries committed on the leader it has yet to apply) and health (answers, follows the leader of the",
          "current term, lag at most " + ClusterStatus.HEALTHY_LAG + "). -o wide adds the peer address, leader and error.",
          "Exits 1 if any member is not healthy.", ""})
  public static final class Status extends ClientCommand {
    @Override
    protected int run(LeaseholdClient client, Output out) {
      ClusterStatus status = client.blocking().clusterStatus();
      out.print(status.members().stream().map(m -> ClusterView.json(status, m)).toList(), ClusterView.table(status, out.wide()));
      return status.members().stream().allMatch(status::healthy) ? 0 : 1;
    }
  }
}
