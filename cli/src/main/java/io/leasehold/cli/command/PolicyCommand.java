package io.leasehold.cli.command;

import io.leasehold.cli.Await;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Json;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.view.AdminView;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Policy;
import io.leasehold.client.PolicyInfo;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code leasehold policy …}: replicated policy per namespace. */
@Command(
    name = "policy",
    mixinStandardHelpOptions = true,
    description = {
      "Policy per namespace: TTL bounds, heartbeat, name pattern, grace, lock-delay, quotas.",
      "",
      "A namespace is the first segment of a name; \"\" is the default policy. Fields: TTL bounds and default,",
      "heartbeat, name pattern, grace, lock-delay, quotas, history length.",
      ""
    })
public final class PolicyCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(
          PolicyCommand.Get.class,
          PolicyCommand.Set.class,
          PolicyCommand.Delete.class,
          PolicyCommand.ListPolicies.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a subcommand is required: get, set, delete or list");
  }

  /**
   * A policy as {@code get} and {@code set} show it: the fields, then, with lease groups, which
   * copy of the policies each governing group holds.
   */
  private static void show(PolicyInfo p, Output out, CommandLine.Model.CommandSpec spec) {
    out.print(AdminView.json(p), AdminView.detail(p));
    if (!out.json()) {
      AdminView.copies(p)
          .ifPresent(
              line -> {
                spec.commandLine().getOut().println(line);
                spec.commandLine().getOut().flush();
              });
    }
  }

  @Command(
      name = "get",
      mixinStandardHelpOptions = true,
      description = "Shows a namespace's own policy (if any) and the policy in force there.")
  public static final class Get extends ClientCommand {
    @Parameters(
        paramLabel = "NAMESPACE",
        description = "The namespace, e.g. lock (\"\" for the default policy).")
    String namespace;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      show(Await.of(client.admin().policy(namespace)), out, spec);
      return 0;
    }
  }

  @Command(
      name = "set",
      mixinStandardHelpOptions = true,
      description = {
        "Replaces a namespace's policy as a whole: options left out take the built-in values, not the",
        "previous policy's or the default policy's. Existing leases meet it at their next renewal.",
        "",
        "  leasehold policy set lock --max-ttl 60s --lock-delay 15s --pattern '[a-z0-9-]+'",
        ""
      })
  public static final class Set extends ClientCommand {
    @Parameters(
        paramLabel = "NAMESPACE",
        description = "The namespace (\"\" for the default policy).")
    String namespace;

    @Option(
        names = "--min-ttl",
        converter = DurationConverter.class,
        paramLabel = "DURATION",
        description = "Shortest TTL (built-in: 2s).")
    Duration minTtl;

    @Option(
        names = "--max-ttl",
        converter = DurationConverter.class,
        paramLabel = "DURATION",
        description = "Longest TTL (built-in: 24h).")
    Duration maxTtl;

    @Option(
        names = "--default-ttl",
        converter = DurationConverter.class,
        paramLabel = "DURATION",
        description = "TTL of an acquisition that names none (built-in: 10s).")
    Duration defaultTtl;

    @Option(
        names = "--heartbeat",
        converter = DurationConverter.class,
        paramLabel = "DURATION",
        description = "Renewal interval suggested to clients (built-in: TTL/3).")
    Duration heartbeat;

    @Option(
        names = "--pattern",
        paramLabel = "REGEX",
        description = "What the rest of a name must match (RE2).")
    String pattern;

    @Option(
        names = "--grace",
        converter = DurationConverter.class,
        paramLabel = "DURATION",
        description = "Extra time before expiry (built-in: none).")
    Duration grace;

    @Option(
        names = "--lock-delay",
        converter = DurationConverter.class,
        paramLabel = "DURATION",
        description =
            "After an expiry, revocation or ban, the name stays free this long (built-in: none).")
    Duration lockDelay;

    @Option(
        names = "--max-per-holder",
        paramLabel = "N",
        description = "Leases one holder may hold here.")
    Long maxPerHolder;

    @Option(
        names = "--max-per-namespace",
        paramLabel = "N",
        description = "Leases the namespace may hold.")
    Long maxPerNamespace;

    @Option(
        names = "--history-limit",
        paramLabel = "N",
        description = "Ended leases kept per name (built-in: 100).")
    Integer historyLimit;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      Policy.Builder p = Policy.builder();
      if (minTtl != null) {
        p.minTtl(minTtl);
      }
      if (maxTtl != null) {
        p.maxTtl(maxTtl);
      }
      if (defaultTtl != null) {
        p.defaultTtl(defaultTtl);
      }
      if (heartbeat != null) {
        p.heartbeatInterval(heartbeat);
      }
      if (pattern != null) {
        p.namePattern(pattern);
      }
      if (grace != null) {
        p.gracePeriod(grace);
      }
      if (lockDelay != null) {
        p.lockDelay(lockDelay);
      }
      if (maxPerHolder != null) {
        p.maxLeasesPerHolder(maxPerHolder);
      }
      if (maxPerNamespace != null) {
        p.maxLeasesPerNamespace(maxPerNamespace);
      }
      if (historyLimit != null) {
        p.historyLimit(historyLimit);
      }
      Await.of(client.admin().setPolicy(namespace, p.build()));
      show(Await.of(client.admin().policy(namespace)), out, spec);
      return 0;
    }
  }

  @Command(
      name = "delete",
      mixinStandardHelpOptions = true,
      description =
          "Removes a namespace's policy: the default policy applies there again (prints existed false if it had none).")
  public static final class Delete extends ClientCommand {
    @Parameters(
        paramLabel = "NAMESPACE",
        description = "The namespace (\"\" for the default policy).")
    String namespace;

    @Override
    protected int run(LeaseholdClient client, Output out) {
      boolean existed = Await.of(client.admin().deletePolicy(namespace));
      out.print(
          Json.object("namespace", namespace, "existed", existed),
          Table.of("NAMESPACE", "EXISTED")
              .row(namespace.isEmpty() ? "(default)" : namespace, existed ? "yes" : "no"));
      return 0;
    }
  }

  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "Lists every stored policy, the default first.")
  public static final class ListPolicies extends ClientCommand {
    @Override
    protected int run(LeaseholdClient client, Output out) {
      List<PolicyInfo> all = Await.of(client.admin().policies());
      Table t = AdminView.listTable();
      all.forEach(p -> AdminView.row(t, p));
      out.print(all.stream().map(AdminView::json).toList(), t);
      return 0;
    }
  }
}
