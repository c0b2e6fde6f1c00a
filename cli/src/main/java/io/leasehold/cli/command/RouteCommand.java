package io.leasehold.cli.command;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.view.RegistryView;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Route;
import io.leasehold.proto.Partitions;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold route …}: the routing table (leases that carry an address). */
@Command(
    name = "route",
    mixinStandardHelpOptions = true,
    description =
        "The routing table: leases that carry an address, with holder, token and partition.")
public final class RouteCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(
          RouteCommand.ListRoutes.class, RouteCommand.Lookup.class, RouteCommand.Partition.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a subcommand is required: list, lookup or partition");
  }

  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "Lists the routes, in name order.")
  public static final class ListRoutes extends ClientCommand {
    @Option(
        names = "--prefix",
        defaultValue = "",
        paramLabel = "PREFIX",
        description = "Only names that start with this.")
    String prefix;

    @Option(
        names = "--holder",
        paramLabel = "HOLDER",
        description =
            "Only this holder's routes, read from the cluster's holder index (one call, however many routes others hold).")
    String holder;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      if (holder != null && holder.isEmpty()) {
        throw usage("--holder: must not be empty");
      }
      List<Route> routes =
          holder == null
              ? client.blocking().routes(prefix)
              : client.blocking().routesHeldBy(holder, prefix);
      Table table = RegistryView.routeTable(out.wide());
      routes.forEach(r -> RegistryView.row(table, r, out.wide()));
      out.print(routes.stream().map(RegistryView::json).toList(), table);
      return 0;
    }
  }

  @Command(
      name = "lookup",
      mixinStandardHelpOptions = true,
      description =
          "Shows where a name routes to. Exits 1 if no live lease with an address holds it.")
  public static final class Lookup extends ClientCommand {
    @Parameters(paramLabel = "NAME", description = "The name, e.g. mailbox/$admin@proxy-01.")
    String name;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      Route r =
          client
              .blocking()
              .lookup(name)
              .orElseThrow(
                  () -> CliFailure.failed(name + " has no route (no live lease with an address)"));
      out.print(RegistryView.json(r), RegistryView.detail(r));
      return 0;
    }
  }

  // picocli formats descriptions as printf does: a percent sign is written %%.
  @Command(
      name = "partition",
      mixinStandardHelpOptions = true,
      description = {
        "Shows the owner of a partition (the holder of partition/<N>), or of the partition of a key",
        "(crc32(key) %% 256). Exits 1 if no one owns it.",
        ""
      })
  public static final class Partition extends ClientCommand {
    @Parameters(paramLabel = "N", arity = "0..1", description = "The partition, 0-255.")
    Integer partition;

    // Not --key: every command takes that for its TLS client key, as etcdctl does.
    @Option(
        names = "--partition-key",
        paramLabel = "KEY",
        description = "The partition of this key instead.")
    String key;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      if ((partition == null) == (key == null)) {
        throw usage(
            "give either N or --partition-key, not " + (partition == null ? "neither" : "both"));
      }
      int n = key != null ? Partitions.of(key) : partition;
      if (n < 0 || n >= Partitions.COUNT) {
        throw usage("N: must be 0-" + (Partitions.COUNT - 1) + ", got " + n);
      }
      String name = Partitions.leaseName(n);
      Route r =
          client
              .blocking()
              .lookup(name)
              .orElseThrow(
                  () ->
                      CliFailure.failed(
                          "partition " + n + " has no owner (" + name + " holds no route)"));
      out.print(RegistryView.json(r), RegistryView.detail(r));
      return 0;
    }
  }
}
