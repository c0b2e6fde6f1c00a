package io.leasehold.cli.command;

import io.leasehold.cli.command.session.SessionCloseCommand;
import io.leasehold.cli.command.session.SessionGetCommand;
import io.leasehold.cli.command.session.SessionListCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code leasehold session …}: inspect and close sessions. */
@Command(
    name = "session",
    mixinStandardHelpOptions = true,
    description = "Inspect and close sessions: one keep-alive for many leases, which end with it.",
    subcommands = {SessionListCommand.class, SessionGetCommand.class, SessionCloseCommand.class})
public final class SessionCommand implements Runnable {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required: list, get or close");
  }
}
