package io.leasehold.cli.command.service;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.UntilInterrupted;
import io.leasehold.cli.view.RegistryView;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import io.leasehold.client.RegisterOptions;
import io.leasehold.client.Registration;
import io.leasehold.client.RegistrationState;
import io.leasehold.client.ServiceInstance;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold service register SERVICE INSTANCE --address A}. */
@Command(
    name = "register",
    mixinStandardHelpOptions = true,
    description = {
      "Registers an instance of a service and prints it.",
      "",
      "The instance is the lease service/<service>/<instance>, SERVING unless --status says otherwise.",
      "Without --hold the registration expires after its TTL; with --hold it is renewed until Ctrl-C, then",
      "deregistered. Exits 1 if another holder registered that instance.",
      ""
    })
public final class ServiceRegisterCommand extends ClientCommand {
  @Parameters(index = "0", paramLabel = "SERVICE", description = "The service, e.g. payments.")
  String service;

  @Parameters(index = "1", paramLabel = "INSTANCE", description = "The instance, e.g. i-7f3a.")
  String instance;

  @Option(
      names = "--address",
      required = true,
      paramLabel = "ADDRESS",
      description = "Where it serves, e.g. 10.0.0.7:8443.")
  String address;

  @Option(names = "--meta", paramLabel = "KEY=VALUE", description = "Metadata; repeatable.")
  Map<String, String> metadata = new LinkedHashMap<>();

  @Option(
      names = "--ttl",
      converter = DurationConverter.Positive.class,
      defaultValue = "10s",
      paramLabel = "DURATION",
      description = "The registration's TTL (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(
      names = "--status",
      defaultValue = Registration.SERVING,
      paramLabel = "STATUS",
      description = "SERVING (default) or e.g. DRAINING.")
  String status;

  @Option(
      names = "--holder",
      paramLabel = "HOLDER",
      description = "Who holds the registration (default: <host>/<pid>/<random>).")
  String holder;

  @Option(
      names = "--hold",
      description = "Keep the registration alive until interrupted (Ctrl-C), then deregister.")
  boolean hold;

  @Override
  protected LeaseholdClientBuilder configure(LeaseholdClientBuilder b) {
    if (holder != null) {
      b.holder(holder);
    }
    return b.releaseOnClose(hold);
  }

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (status.isEmpty()) {
      throw usage("--status: must not be empty");
    }
    RegisterOptions options =
        RegisterOptions.DEFAULTS.withTtl(ttl).withStatus(status).withReRegister(hold);
    try (UntilInterrupted ignored = UntilInterrupted.install(globals().timeout().plusSeconds(1))) {
      Registration r = client.blocking().register(service, instance, address, metadata, options);
      ServiceInstance registered =
          client.blocking().resolve(service, true).stream()
              .filter(i -> i.instance().equals(instance) && i.token() == r.token())
              .findFirst()
              .orElseThrow(
                  () ->
                      CliFailure.failed(
                          service
                              + "/"
                              + instance
                              + ": registered (token "
                              + r.token()
                              + ") but already gone"));
      Table table = RegistryView.instanceTable(out.wide());
      RegistryView.row(table, registered, out.wide());
      out.print(RegistryView.json(registered), table);
      if (!hold) {
        return 0;
      }
      err()
          .printf(
              "registered %s/%s (token %d); Ctrl-C deregisters it%n", service, instance, r.token());
      err().flush();
      CountDownLatch ended = new CountDownLatch(1);
      r.addListener(
          (reg, from, to) -> {
            if (to == RegistrationState.LOST) {
              err()
                  .printf("lost the registration of %s/%s; registering again%n", service, instance);
              err().flush();
            } else if (to == RegistrationState.DEREGISTERED) {
              ended.countDown();
            }
          });
      try {
        ended.await();
        throw CliFailure.failed(
            service + "/" + instance + ": the registration ended (" + r.state() + ")");
      } catch (InterruptedException e) {
        r.close();
        return 0;
      }
    }
  }
}
