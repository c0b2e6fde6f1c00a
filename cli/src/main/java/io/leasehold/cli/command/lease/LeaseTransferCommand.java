package io.leasehold.cli.command.lease;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import java.time.Duration;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease transfer NAME --to HOLDER}. */
@Command(name = "transfer", mixinStandardHelpOptions = true,
    description = {"Hands the lease on a name to another holder, with no moment at which the name is free.", "",
        "One replicated step ends the lease (reason TRANSFERRED) and grants --to a new lease with a new, larger",
        " fencing token; the old token is refused from then on. Without --token, the lease holding the name now.",
        "Prints the new lease. Exits 1 if no lease (with --token: no lease with that token) holds the name, or if",
        " the namespace's policy refuses the new holder.", ""})
public final class LeaseTransferCommand extends ClientCommand {
  @Parameters(paramLabel = "NAME", description = "The leased name.")
  String name;

  @Option(names = "--to", required = true, paramLabel = "HOLDER", description = "Who is to hold the name.")
  String to;

  @Option(names = "--token", paramLabel = "TOKEN", defaultValue = "0",
      description = "Only the lease with this token (default: whichever holds the name now).")
  long token;

  @Option(names = "--ttl", paramLabel = "DURATION", description = "The new lease's TTL, e.g. 30s (default: the namespace's default TTL).")
  Duration ttl;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (token < 0) {
      throw usage("--token: must be positive, got " + token);
    }
    if (to.isBlank()) {
      throw usage("--to: must not be empty");
    }
    long current = token;
    if (current == 0) {
      current = client.blocking().get(name)
          .orElseThrow(() -> CliFailure.failed(name + " is not held (see 'leasehold lease history " + name + "')")).token();
    }
    long from = current;
    LeaseInfo moved = client.blocking().transfer(name, current, to, Optional.ofNullable(ttl))
        .orElseThrow(() -> CliFailure.failed(name + ": no lease with token " + from + " is held (expired, released or superseded)"));
    out.print(LeaseView.json(moved), LeaseView.detail(moved));
    return 0;
  }
}
