package io.leasehold.cli.command.service;

import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.view.RegistryView;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.ServiceInstance;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold service set-status SERVICE INSTANCE STATUS [--token T]}. */
@Command(
    name = "set-status",
    mixinStandardHelpOptions = true,
    description = {
      "Sets the status of an instance of a service (e.g. DRAINING, so resolvers stop sending it new work)",
      "and prints the instance; its address, metadata, token and deadline stay as they are.",
      "",
      "With --token, only the registration with that fencing token; without, the instance's live registration.",
      "Exits 1 if no (such) registration is live.",
      "",
      "  leasehold service set-status payments i-7f3a DRAINING",
      ""
    })
public final class ServiceSetStatusCommand extends ClientCommand {
  @Parameters(index = "0", paramLabel = "SERVICE", description = "The service, e.g. payments.")
  String service;

  @Parameters(index = "1", paramLabel = "INSTANCE", description = "The instance, e.g. i-7f3a.")
  String instance;

  @Parameters(
      index = "2",
      paramLabel = "STATUS",
      description = "The new status, e.g. SERVING or DRAINING.")
  String status;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      description = "The registration's fencing token (default: the live registration's).")
  Long token;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (status.isBlank()) {
      throw usage("STATUS: must not be empty");
    }
    if (token != null && token <= 0) {
      throw usage("--token: must be positive, got " + token);
    }
    long t = token != null ? token : ServiceDeregisterCommand.liveToken(client, service, instance);
    ServiceInstance updated =
        client
            .blocking()
            .setStatus(service, instance, t, status)
            .orElseThrow(() -> ServiceDeregisterCommand.notLive(service, instance, t));
    Table table = RegistryView.instanceTable(out.wide());
    RegistryView.row(table, updated, out.wide());
    out.print(RegistryView.json(updated), table);
    return 0;
  }
}
