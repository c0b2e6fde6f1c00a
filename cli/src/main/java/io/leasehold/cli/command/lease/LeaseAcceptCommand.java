package io.leasehold.cli.command.lease;

import io.leasehold.cli.Await;
import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease accept NAME --offer ID --holder HOLDER}. */
@Command(
    name = "accept",
    mixinStandardHelpOptions = true,
    description = {
      "Accepts a transfer offered to a holder ('lease transfer --accept-within'): the name moves to it now.",
      "",
      "One replicated step ends the offering holder's lease (reason TRANSFERRED) and grants --holder a new lease with a",
      " new, larger fencing token. The lease then lives its TTL unless its holder renews it (acquiring it again as that",
      " holder answers with it). Prints the new lease. Exits 1 if the offer no longer stands (withdrawn at its deadline,",
      " replaced, or the lease ended) or the policy refuses the holder.",
      ""
    })
public final class LeaseAcceptCommand extends ClientCommand {
  @Parameters(paramLabel = "NAME", description = "The leased name.")
  String name;

  @Option(
      names = "--offer",
      required = true,
      paramLabel = "ID",
      description = "The offer's id, as 'lease transfer --accept-within' printed it.")
  long offer;

  @Option(
      names = "--holder",
      required = true,
      paramLabel = "HOLDER",
      description = "The holder the lease was offered to.")
  String holder;

  @Override
  protected LeaseholdClientBuilder configure(LeaseholdClientBuilder b) {
    // The lease outlives this command (its TTL), as after 'lease acquire' without --hold.
    return b.holder(holder).releaseOnClose(false).sessions(false);
  }

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (offer <= 0) {
      throw usage("--offer: must be a positive offer id, got " + offer);
    }
    Lease lease =
        Await.of(client.acceptTransfer(name, offer))
            .orElseThrow(
                () ->
                    CliFailure.failed(
                        name
                            + ": offer "
                            + offer
                            + " no longer stands (withdrawn, replaced, or the lease ended)"));
    LeaseInfo info =
        client
            .blocking()
            .get(name)
            .filter(l -> l.token() == lease.token())
            .orElseThrow(
                () ->
                    CliFailure.failed(
                        name + ": the accepted lease (token " + lease.token() + ") ended at once"));
    out.print(LeaseView.json(info), LeaseView.detail(info));
    return 0;
  }
}
