package io.leasehold.cli.command.service;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.ServiceInstance;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold service deregister SERVICE INSTANCE [--token T]}. */
@Command(
    name = "deregister",
    mixinStandardHelpOptions = true,
    description = {
      "Deregisters an instance of a service: its lease service/<service>/<instance> ends (RELEASED) at once.",
      "",
      "With --token, only the registration with that fencing token; without, the instance's live registration.",
      "Exits 1 if no (such) registration is live.",
      ""
    })
public final class ServiceDeregisterCommand extends ClientCommand {
  @Parameters(index = "0", paramLabel = "SERVICE", description = "The service, e.g. payments.")
  String service;

  @Parameters(index = "1", paramLabel = "INSTANCE", description = "The instance, e.g. i-7f3a.")
  String instance;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      description = "The registration's fencing token (default: the live registration's).")
  Long token;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (token != null && token <= 0) {
      throw usage("--token: must be positive, got " + token);
    }
    long t = token != null ? token : liveToken(client, service, instance);
    if (!client.blocking().deregister(service, instance, t)) {
      throw notLive(service, instance, t);
    }
    out.print(
        Json.object("service", service, "instance", instance, "token", t, "deregistered", true),
        Table.of("SERVICE", "INSTANCE", "TOKEN", "DEREGISTERED").row(service, instance, t, "yes"));
    return 0;
  }

  /**
   * The token of the instance's live registration, whatever its status; exit code 1 if there is
   * none.
   */
  static long liveToken(LeaseholdClient client, String service, String instance) {
    return client.blocking().resolve(service, true).stream()
        .filter(i -> i.instance().equals(instance))
        .findFirst()
        .map(ServiceInstance::token)
        .orElseThrow(() -> CliFailure.failed(service + "/" + instance + " is not registered"));
  }

  static CliFailure notLive(String service, String instance, long token) {
    return CliFailure.failed(
        service
            + "/"
            + instance
            + ": no registration with token "
            + token
            + " is live (expired, deregistered or registered again)");
  }
}
