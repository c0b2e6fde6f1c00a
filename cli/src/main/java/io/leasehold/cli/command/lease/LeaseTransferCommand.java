package io.leasehold.cli.command.lease;

import io.leasehold.cli.Await;
import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Human;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import java.time.Duration;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease transfer NAME --to HOLDER}. */
@Command(
    name = "transfer",
    mixinStandardHelpOptions = true,
    description = {
      "Hands the lease on a name to another holder, with no moment at which the name is free.",
      "",
      "One replicated step ends the lease (reason TRANSFERRED) and grants --to a new lease with a new, larger",
      " fencing token; the old token is refused from then on. Without --token, the lease holding the name now.",
      "Prints the new lease. Exits 1 if no lease (with --token: no lease with that token) holds the name, or if",
      " the namespace's policy refuses the new holder. With --accept-within it only offers the lease: it prints the",
      " offer's id for 'lease accept', and the cluster withdraws the offer if it is not accepted in time.",
      ""
    })
public final class LeaseTransferCommand extends ClientCommand {
  @Parameters(paramLabel = "NAME", description = "The leased name.")
  String name;

  @Option(
      names = "--to",
      required = true,
      paramLabel = "HOLDER",
      description = "Who is to hold the name.")
  String to;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      defaultValue = "0",
      description = "Only the lease with this token (default: whichever holds the name now).")
  long token;

  @Option(
      names = "--ttl",
      converter = DurationConverter.Positive.class,
      paramLabel = "DURATION",
      description = "The new lease's TTL, e.g. 30s (default: the namespace's default TTL).")
  Duration ttl;

  @Option(
      names = "--accept-within",
      converter = DurationConverter.class,
      paramLabel = "DURATION",
      description =
          "Only offer it: --to takes it with 'lease accept' within this long; the lease stays where it is meanwhile.")
  Duration acceptWithin;

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
      current =
          client
              .blocking()
              .get(name)
              .orElseThrow(
                  () ->
                      CliFailure.failed(
                          name + " is not held (see 'leasehold lease history " + name + "')"))
              .token();
    }
    long from = current;
    if (acceptWithin != null) {
      if (ttl != null) {
        throw usage(
            "--ttl: not with --accept-within (the new lease gets the namespace's default TTL)");
      }
      long offer =
          Await.of(client.offer(name, current, to, acceptWithin))
              .orElseThrow(
                  () ->
                      CliFailure.failed(
                          name
                              + ": no lease with token "
                              + from
                              + " is held (expired, released or superseded)"));
      out.print(
          Json.object(
              "name",
              name,
              "token",
              from,
              "offeredTo",
              to,
              "offer",
              offer,
              "acceptWithinMs",
              acceptWithin.toMillis()),
          Table.of("NAME", "TOKEN", "OFFERED TO", "OFFER", "ACCEPT WITHIN")
              .row(name, from, to, offer, Human.duration(acceptWithin)));
      return 0;
    }
    LeaseInfo moved =
        client
            .blocking()
            .transfer(name, current, to, Optional.ofNullable(ttl))
            .orElseThrow(
                () ->
                    CliFailure.failed(
                        name
                            + ": no lease with token "
                            + from
                            + " is held (expired, released or superseded)"));
    // The new holder's lease as the transfer granted it, which no node has judged yet: just
    // granted.
    out.print(LeaseView.json(moved, "ACTIVE"), LeaseView.detail(moved, "ACTIVE"));
    return 0;
  }
}
