package io.leasehold.cli.command.lease;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease get NAME}. */
@Command(name = "get", mixinStandardHelpOptions = true,
    description = {"Shows who holds a name, since when and until when.", "",
        "The live lease: holder, token, TTL, acquired, last renewed, expires in, state, renew count and attributes.",
        " Exits 1 if no lease holds the name (see 'lease history' for why).", ""})
public final class LeaseGetCommand extends ClientCommand {
  @Parameters(paramLabel = "NAME", description = "The leased name, e.g. lock/billing-job.")
  String name;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    LeaseInfo lease = client.blocking().get(name)
        .orElseThrow(() -> CliFailure.failed(name + " is not held (see 'leasehold lease history " + name + "')"));
    out.print(LeaseView.json(lease), LeaseView.detail(lease));
    return 0;
  }
}
