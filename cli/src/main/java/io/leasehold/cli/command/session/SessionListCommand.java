package io.leasehold.cli.command.session;

import io.leasehold.cli.Await;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.view.SessionView;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.SessionInfo;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code leasehold session list}. */
@Command(
    name = "list",
    mixinStandardHelpOptions = true,
    description = {
      "Lists live sessions in id order.",
      "",
      "Columns: ID, HOLDER, TTL, EXPIRES IN, STATE (ACTIVE, or STALE: not kept alive for two heartbeats), KEEP-ALIVES.",
      "'session get ID' counts and names the leases attached to one.",
      ""
    })
public final class SessionListCommand extends ClientCommand {
  @Option(
      names = "--holder",
      paramLabel = "HOLDER",
      defaultValue = "",
      description = "Only this holder's sessions.")
  String holder;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    List<SessionInfo> sessions = Await.of(client.admin().sessions(holder));
    Table table = SessionView.listTable();
    sessions.forEach(s -> SessionView.row(table, s));
    out.print(sessions.stream().map(SessionView::json).toList(), table);
    return 0;
  }
}
