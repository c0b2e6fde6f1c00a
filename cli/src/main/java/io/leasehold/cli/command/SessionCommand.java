package io.leasehold.cli.command;

import io.leasehold.cli.command.session.SessionCloseCommand;
import io.leasehold.cli.command.session.SessionGetCommand;
import io.leasehold.cli.command.session.SessionListCommand;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code leasehold session …}: inspect and close sessions. */
@Command(
    name = "session",
    mixinStandardHelpOptions = true,
    description = "Inspect and close sessions: one keep-alive for many leases, which end with it.")
public final class SessionCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(SessionListCommand.class, SessionGetCommand.class, SessionCloseCommand.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a subcommand is required: list, get or close");
  }
}
