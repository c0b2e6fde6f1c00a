package io.leasehold.cli.command.lease;

import io.leasehold.cli.Await;
import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease revoke NAME --reason R}. */
@Command(
    name = "revoke",
    mixinStandardHelpOptions = true,
    description = {
      "Ends the live lease on a name, whoever holds it.",
      "",
      "Its history shows reason REVOKED and your --reason.",
      "Prints the lease as it was, in state REVOKED. Exits 1 if no lease (with --token: no lease with that token) holds the name.",
      ""
    })
public final class LeaseRevokeCommand extends ClientCommand {
  @Parameters(paramLabel = "NAME", description = "The leased name.")
  String name;

  @Option(
      names = "--reason",
      required = true,
      paramLabel = "TEXT",
      description = "Why; kept in the lease's history.")
  String reason;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      defaultValue = "0",
      description = "Only the lease with this token (default: whichever holds the name).")
  long token;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (token < 0) {
      throw usage("--token: must be positive, got " + token);
    }
    LeaseInfo revoked =
        Await.of(client.admin().revoke(name, reason, token))
            .orElseThrow(
                () ->
                    CliFailure.failed(
                        name
                            + ": "
                            + (token == 0
                                ? "no lease is held"
                                : "no lease with token " + token + " is held")));
    // The lease as it was when it ended: no node judged it, and it is no longer live.
    out.print(LeaseView.json(revoked, "REVOKED"), LeaseView.detail(revoked, "REVOKED"));
    return 0;
  }
}
