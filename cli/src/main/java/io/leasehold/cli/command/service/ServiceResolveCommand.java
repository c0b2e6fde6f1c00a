package io.leasehold.cli.command.service;

import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.view.RegistryView;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.ServiceInstance;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold service resolve SERVICE}. */
@Command(
    name = "resolve",
    mixinStandardHelpOptions = true,
    description =
        "Lists the live SERVING instances of a service (with --all: whatever their status).")
public final class ServiceResolveCommand extends ClientCommand {
  @Parameters(paramLabel = "SERVICE", description = "The service, e.g. payments.")
  String service;

  @Option(names = "--all", description = "Every live instance, DRAINING ones too.")
  boolean all;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    List<ServiceInstance> instances = client.blocking().resolve(service, all);
    Table table = RegistryView.instanceTable(out.wide());
    instances.forEach(i -> RegistryView.row(table, i, out.wide()));
    out.print(instances.stream().map(RegistryView::json).toList(), table);
    return 0;
  }
}
