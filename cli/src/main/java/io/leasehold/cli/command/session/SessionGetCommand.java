package io.leasehold.cli.command.session;

import io.leasehold.cli.Await;
import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Output;
import io.leasehold.cli.view.SessionView;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.SessionDetail;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code leasehold session get ID}. */
@Command(
    name = "get",
    mixinStandardHelpOptions = true,
    description = {
      "Shows a session: its holder, TTL, when it was last kept alive, and the leases attached to it.",
      "",
      "Exits 1 if no such session is live (it expired or was closed; 'lease history' of its leases says which).",
      ""
    })
public final class SessionGetCommand extends ClientCommand {
  @Parameters(paramLabel = "ID", description = "The session's id.")
  long id;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (id <= 0) {
      throw usage("ID: must be a positive session id, got " + id);
    }
    SessionDetail s =
        Await.of(client.admin().session(id))
            .orElseThrow(
                () ->
                    CliFailure.failed("session " + id + " is not live (it expired or was closed)"));
    out.print(SessionView.json(s), SessionView.detail(s));
    return 0;
  }
}
