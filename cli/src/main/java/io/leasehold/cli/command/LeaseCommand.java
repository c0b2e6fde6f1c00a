package io.leasehold.cli.command;

import io.leasehold.cli.command.lease.LeaseAcceptCommand;
import io.leasehold.cli.command.lease.LeaseAcquireCommand;
import io.leasehold.cli.command.lease.LeaseGetCommand;
import io.leasehold.cli.command.lease.LeaseHistoryCommand;
import io.leasehold.cli.command.lease.LeaseKeepAliveCommand;
import io.leasehold.cli.command.lease.LeaseListCommand;
import io.leasehold.cli.command.lease.LeaseReleaseCommand;
import io.leasehold.cli.command.lease.LeaseRenewCommand;
import io.leasehold.cli.command.lease.LeaseRevokeCommand;
import io.leasehold.cli.command.lease.LeaseTransferCommand;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code leasehold lease …}: inspect, take and end leases. */
@Command(
    name = "lease",
    mixinStandardHelpOptions = true,
    description =
        "Inspect, acquire, renew, release, revoke and transfer leases; read why they ended.")
public final class LeaseCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(
          LeaseListCommand.class,
          LeaseGetCommand.class,
          LeaseAcquireCommand.class,
          LeaseRenewCommand.class,
          LeaseKeepAliveCommand.class,
          LeaseReleaseCommand.class,
          LeaseRevokeCommand.class,
          LeaseTransferCommand.class,
          LeaseAcceptCommand.class,
          LeaseHistoryCommand.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(),
        "a subcommand is required: list, get, acquire, renew, keep-alive, release, revoke, transfer, accept or history");
  }
}
