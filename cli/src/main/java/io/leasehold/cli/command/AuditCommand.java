package io.leasehold.cli.command;

import io.leasehold.cli.Await;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Human;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.client.AuditRecord;
import io.leasehold.client.LeaseholdClient;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code leasehold audit}: who did what to the cluster, and how it went. */
@Command(
    name = "audit",
    mixinStandardHelpOptions = true,
    description =
        "The audit history, newest first: every admin and auth action (policy, bans, revocations, roles, grants, "
            + "membership, snapshots, backups, and refused admin calls), with who, when and the outcome.")
public final class AuditCommand extends ClientCommand {
  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "50",
      description = "At most N records (0: all that is kept; default: ${DEFAULT-VALUE}).")
  int limit;

  @Option(
      names = "--identity",
      paramLabel = "IDENTITY",
      description = "Only this identity's actions.")
  String identity;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (limit < 0) {
      throw usage("--limit: must not be negative, got " + limit);
    }
    List<AuditRecord> records =
        Await.of(client.auth().audit(limit, identity == null ? "" : identity));
    Table t = Table.of("REVISION", "TIME", "IDENTITY", "ACTION", "TARGET", "OUTCOME", "DETAIL");
    records.forEach(
        r ->
            t.row(
                r.revision(),
                Human.time(r.time()),
                Human.orDash(r.identity()),
                r.action(),
                Human.orDash(r.target()),
                r.outcome(),
                Human.orDash(r.detail())));
    out.print(
        records.stream()
            .map(
                r ->
                    Json.object(
                        "revision",
                        r.revision(),
                        "time",
                        r.time().toString(),
                        "identity",
                        r.identity(),
                        "action",
                        r.action(),
                        "target",
                        r.target(),
                        "outcome",
                        r.outcome(),
                        "detail",
                        r.detail()))
            .toList(),
        t);
    return 0;
  }
}
