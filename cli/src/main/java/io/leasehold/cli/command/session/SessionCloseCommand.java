package io.leasehold.cli.command.session;

import io.leasehold.cli.Await;
import io.leasehold.cli.CliFailure;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.client.LeaseholdClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code leasehold session close ID}. */
@Command(
    name = "close",
    mixinStandardHelpOptions = true,
    description = {
      "Closes a session: it and every lease attached to it end in one replicated step.",
      "",
      "The leases' history shows reason SESSION_CLOSED; no lock-delay follows, as after a release.",
      "Exits 1 if no such session is live.",
      ""
    })
public final class SessionCloseCommand extends ClientCommand {
  @Parameters(paramLabel = "ID", description = "The session's id.")
  long id;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (id <= 0) {
      throw usage("ID: must be a positive session id, got " + id);
    }
    long ended = Await.of(client.admin().closeSession(id));
    if (ended < 0) {
      throw CliFailure.failed("session " + id + " is not live (it expired or was closed)");
    }
    out.print(
        Json.object("session", id, "closed", true, "leasesEnded", ended),
        Table.of("SESSION", "CLOSED", "LEASES ENDED").row(id, "yes", ended));
    return 0;
  }
}
