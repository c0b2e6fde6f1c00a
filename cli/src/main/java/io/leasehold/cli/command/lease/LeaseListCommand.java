package io.leasehold.cli.command.lease;

import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.view.LeaseView;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.ServerLeaseState;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code leasehold lease list}. */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description = {
      "Lists live leases in name order.",
      "",
      "Columns: NAME, HOLDER, TOKEN, TTL, EXPIRES IN, STATE (ACTIVE; EXPIRING: past its end, in its grace period;",
      " STALE: its holder has not renewed for two heartbeats);",
      "-o wide adds ADDRESS, STATUS, ACQUIRED, RENEWED, RENEWS, METADATA.",
      ""
    })
public final class LeaseListCommand extends ClientCommand {
  @Option(
      names = "--prefix",
      paramLabel = "PREFIX",
      defaultValue = "",
      description = "Only names that start with this (e.g. lock/).")
  String prefix;

  @Option(
      names = "--holder",
      paramLabel = "HOLDER",
      description = "Only leases this holder holds (read from the holder index).")
  String holder;

  @Option(names = "--stale", description = "Only STALE leases (holders that stopped renewing).")
  boolean stale;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    // By holder: one read of the cluster's holder index, not a scan of every lease.
    List<LeaseInfo> leases =
        (holder == null
                ? client.blocking().list(prefix)
                : client.blocking().listHeldBy(holder, prefix))
            .leases().stream()
                .filter(l -> !stale || l.serverState() == ServerLeaseState.STALE)
                .toList();
    Table table = LeaseView.listTable(out.wide());
    leases.forEach(l -> LeaseView.row(table, l, out.wide()));
    out.print(leases.stream().map(LeaseView::json).toList(), table);
    return 0;
  }
}
