package io.leasehold.cli.command;

import io.leasehold.cli.Await;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.view.AdminView;
import io.leasehold.client.BanInfo;
import io.leasehold.client.LeaseholdClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold ban …}: banned holders cannot acquire or renew. */
@Command(
    name = "ban",
    mixinStandardHelpOptions = true,
    description =
        "Bans: a banned holder cannot acquire or renew, and its live leases end at once (reason BANNED).")
public final class BanCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(BanCommand.Add.class, BanCommand.Remove.class, BanCommand.ListBans.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a subcommand is required: add, remove or list");
  }

  @Command(
      name = "add",
      mixinStandardHelpOptions = true,
      description = "Bans a holder, until 'ban remove' or for a while (--duration).")
  public static final class Add extends ClientCommand {
    @Parameters(paramLabel = "HOLDER", description = "The holder to ban.")
    String holder;

    @Option(
        names = "--reason",
        required = true,
        paramLabel = "TEXT",
        description = "Why; shown in the ban and the history of the leases it ends.")
    String reason;

    @Option(
        names = "--duration",
        converter = DurationConverter.class,
        paramLabel = "DURATION",
        description =
            "Lift the ban after this long, e.g. 10m or 1h30m (default: until 'ban remove').")
    Duration duration;

    /** The option's first name, kept so that scripts written for it go on working. */
    @Option(
        names = "--for",
        converter = DurationConverter.class,
        paramLabel = "DURATION",
        hidden = true,
        description = "Deprecated: the same as --duration.")
    Duration forDuration;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      if (forDuration != null) {
        if (duration != null) {
          throw usage("--for: the deprecated name of --duration; give only --duration");
        }
        err().println("warning: --for is deprecated; use --duration");
        err().flush();
        duration = forDuration;
      }
      BanInfo ban = Await.of(client.admin().ban(holder, reason, Optional.ofNullable(duration)));
      Table t = AdminView.banTable();
      AdminView.row(t, ban);
      out.print(AdminView.json(ban), t);
      return 0;
    }
  }

  @Command(
      name = "remove",
      mixinStandardHelpOptions = true,
      description = "Lifts a holder's ban (prints wasBanned false if it had none).")
  public static final class Remove extends ClientCommand {
    @Parameters(paramLabel = "HOLDER", description = "The holder.")
    String holder;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      boolean was = Await.of(client.admin().unban(holder));
      out.print(
          Json.object("holder", holder, "wasBanned", was),
          Table.of("HOLDER", "WAS BANNED").row(holder, was ? "yes" : "no"));
      return 0;
    }
  }

  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "Lists the bans in force, in holder order.")
  public static final class ListBans extends ClientCommand {
    @Override
    protected int run(LeaseholdClient client, Output out) {
      List<BanInfo> bans = Await.of(client.admin().bans());
      Table t = AdminView.banTable();
      bans.forEach(b -> AdminView.row(t, b));
      out.print(AdminView.jsonBans(bans), t);
      return 0;
    }
  }
}
