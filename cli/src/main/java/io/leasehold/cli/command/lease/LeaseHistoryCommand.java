package io.leasehold.cli.command.lease;

import io.leasehold.cli.Await;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.EndedLease;
import io.leasehold.client.LeaseholdClient;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold lease history NAME|--holder H}. */
@Command(
    name = "history",
    mixinStandardHelpOptions = true,
    description = {
      "Lists the leases on a name (or of a holder) that ended, and why.",
      "",
      "Newest first, with the reason: RELEASED, EXPIRED, REVOKED or BANNED, with the operator's message.",
      ""
    })
public final class LeaseHistoryCommand extends ClientCommand {
  @Parameters(paramLabel = "NAME", arity = "0..1", description = "The leased name.")
  String name;

  @Option(
      names = "--holder",
      paramLabel = "HOLDER",
      description = "The leases this holder held, instead of a name's.")
  String holder;

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "0",
      description = "At most this many (default: all that is kept).")
  int limit;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if ((name == null) == (holder == null)) {
      throw usage("give either NAME or --holder, not " + (name == null ? "neither" : "both"));
    }
    if (limit < 0) {
      throw usage("--limit: must not be negative, got " + limit);
    }
    List<EndedLease> ended =
        Await.of(
            name != null
                ? client.admin().history(name, limit)
                : client.admin().historyOfHolder(holder, limit));
    Table table = LeaseView.historyTable(out.wide());
    ended.forEach(e -> LeaseView.row(table, e, out.wide()));
    out.print(ended.stream().map(LeaseView::json).toList(), table);
    return 0;
  }
}
