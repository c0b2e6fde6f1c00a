package io.leasehold.cli.command.lease;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.AcquireRejectedException;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Renewal;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease renew NAME --token T}. */
@Command(
    name = "renew",
    mixinStandardHelpOptions = true,
    description = {
      "Renews, once, the lease on a name that has this fencing token, and prints its new deadline.",
      "",
      "For a lease taken with a plain 'lease acquire' (by this or any process); 'lease keep-alive' renews it until",
      "interrupted. Exits 1 if no lease with that token holds the name (it expired, was released or superseded) or",
      "the policy refuses to renew it.",
      ""
    })
public final class LeaseRenewCommand extends ClientCommand {
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
    Renewal r = renew(client, name, token);
    out.print(LeaseView.json(r), LeaseView.detail(r));
    return 0;
  }

  /**
   * One renewal; a lease that is not held or that the policy will not renew fails with exit code 1.
   */
  static Renewal renew(LeaseholdClient client, String name, long token) {
    try {
      return client.blocking().renew(name, token).orElseThrow(() -> notHeld(name, token));
    } catch (AcquireRejectedException e) {
      throw refused(name, e);
    }
  }

  static CliFailure notHeld(String name, long token) {
    return CliFailure.failed(
        name + ": no lease with token " + token + " is held (expired, released or superseded)");
  }

  static CliFailure refused(String name, AcquireRejectedException e) {
    return CliFailure.failed(
        name
            + ": renewal refused by policy ("
            + e.rejection().reason()
            + "): "
            + e.rejection().message()
            + "; the lease ends at its deadline");
  }
}
