package io.leasehold.cli.command.lease;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.client.LeaseholdClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease release NAME --token T}. */
@Command(
    name = "release",
    mixinStandardHelpOptions = true,
    description = {
      "Releases the lease on a name that has this fencing token.",
      "",
      "The name is free at once.",
      "Exits 1 if no lease with that token holds the name (it expired, was released or superseded).",
      ""
    })
public final class LeaseReleaseCommand extends ClientCommand {
  @Parameters(paramLabel = "NAME", description = "The leased name.")
  String name;

  @Option(
      names = "--token",
      required = true,
      paramLabel = "TOKEN",
      description = "The lease's fencing token.")
  long token;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (token <= 0) {
      throw usage("--token: must be positive, got " + token);
    }
    if (!client.blocking().release(name, token)) {
      throw CliFailure.failed(
          name + ": no lease with token " + token + " is held (expired, released or superseded)");
    }
    out.print(
        Json.object("name", name, "token", token, "released", true),
        Table.of("NAME", "TOKEN", "RELEASED").row(name, token, "yes"));
    return 0;
  }
}
