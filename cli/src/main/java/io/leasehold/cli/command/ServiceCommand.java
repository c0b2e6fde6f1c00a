package io.leasehold.cli.command;

import io.leasehold.cli.command.service.ServiceDeregisterCommand;
import io.leasehold.cli.command.service.ServiceListCommand;
import io.leasehold.cli.command.service.ServiceRegisterCommand;
import io.leasehold.cli.command.service.ServiceResolveCommand;
import io.leasehold.cli.command.service.ServiceSetStatusCommand;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code leasehold service …}: the service registry. */
@Command(
    name = "service",
    mixinStandardHelpOptions = true,
    description = "The service registry: instances are leases named service/<service>/<instance>.")
public final class ServiceCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(
          ServiceListCommand.class,
          ServiceResolveCommand.class,
          ServiceRegisterCommand.class,
          ServiceDeregisterCommand.class,
          ServiceSetStatusCommand.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(),
        "a subcommand is required: list, resolve, register, deregister or set-status");
  }
}
