package io.leasehold.cli.command;

import io.leasehold.cli.Await;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.NamespaceMove;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code leasehold namespace …}: where namespaces live on a cluster with lease groups. */
@Command(
    name = "namespace",
    mixinStandardHelpOptions = true,
    description =
        "Namespaces on a cluster with lease groups (the part of names before the first '/'): moves.")
public final class NamespaceCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS = List.of(NamespaceCommand.Move.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a subcommand is required: move");
  }

  @Command(
      name = "move",
      mixinStandardHelpOptions = true,
      description = {
        "Moves namespace NS to lease group GROUP, online: every lease keeps its token and holder, and tokens",
        "of its names keep increasing; writes to it wait while it moves. Waits until the group serves it,",
        "then prints where it lives. `cluster groups` lists the groups and their namespaces.",
        ""
      })
  public static final class Move extends ClientCommand {
    @CommandLine.Parameters(index = "0", paramLabel = "NS", description = "The namespace.")
    String namespace;

    @CommandLine.Option(
        names = "--to",
        required = true,
        paramLabel = "GROUP",
        description = "The lease group it goes to (1 or more).")
    int to;

    @Override
    protected int run(LeaseholdClient client, Output out) throws Exception {
      NamespaceMove m = Await.of(client.cluster().moveNamespace(namespace, to));
      out.print(
          Json.object(
              "namespace", m.namespace(), "group", m.group(), "epoch", m.epoch(), "move", m.move()),
          Table.of("NAMESPACE", "GROUP", "EPOCH", "MOVE")
              .row(m.namespace(), m.group(), m.epoch(), m.move()));
      return 0;
    }
  }
}
