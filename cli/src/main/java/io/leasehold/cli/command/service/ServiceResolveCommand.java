package io.leasehold.cli.command.service;

import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Output;
import io.leasehold.cli.Table;
import io.leasehold.cli.command.ServiceFilters;
import io.leasehold.cli.view.RegistryView;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.ResolvedService;
import io.leasehold.client.ServiceFilter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code leasehold service resolve SERVICE [--zone Z,...] [--meta K=V]... [--status S,...]
 * [--wait-version N [--wait D]]}.
 */
@Command(
    name = "resolve",
    mixinStandardHelpOptions = true,
    description = {
      "Lists the live SERVING instances of a service (with --all: whatever their status), or those"
          + " that match --zone, --meta and --status.",
      "An instance's zone is its metadata value under \"zone\" (service register --meta"
          + " zone=eu-west-1a). With --zone, only the instances of the first zone that has any are"
          + " listed, and the zone chosen is named under the table; * stands for every zone.",
      "The service's version (the revision of the last change to its instances) is printed under"
          + " the table. With --wait-version N the command waits until the version is above N, or"
          + " --wait is over, then prints the instances as they are: a script that cannot hold a"
          + " watch loops on it, passing each version on (with -o json it prints"
          + " {\"version\", \"revision\", \"zone\", \"instances\"})."
    })
public final class ServiceResolveCommand extends ClientCommand {
  private static final Duration DEFAULT_WAIT = Duration.ofMinutes(5);

  @Spec CommandSpec spec;

  @Parameters(paramLabel = "SERVICE", description = "The service, e.g. payments.")
  String service;

  @Option(names = "--all", description = "Every live instance, DRAINING ones too.")
  boolean all;

  @Option(
      names = "--zone",
      split = ",",
      paramLabel = "ZONE",
      description =
          "Zones in order of preference, e.g. --zone eu-west-1a,eu-west-1b,* (the first with a"
              + " matching instance wins; * is any zone).")
  List<String> zones = new ArrayList<>();

  @Option(
      names = "--meta",
      paramLabel = "KEY=VALUE",
      description = "Only instances with this metadata value; repeatable (all must match).")
  Map<String, String> metadata = new LinkedHashMap<>();

  @Option(
      names = "--status",
      split = ",",
      paramLabel = "STATUS",
      description = "Only instances with one of these statuses, e.g. SERVING,DRAINING.")
  List<String> statuses = new ArrayList<>();

  @Option(
      names = "--wait-version",
      paramLabel = "N",
      description =
          "Wait until the service's version is above N (the version a previous resolve printed).")
  Long waitVersion;

  @Option(
      names = "--wait",
      paramLabel = "DURATION",
      converter = DurationConverter.Positive.class,
      description =
          "With --wait-version, the longest to wait, at most 10m (default: 5m); then the instances"
              + " are printed as they are.")
  Duration waitUpTo;

  @Override
  protected int run(LeaseholdClient client, Output out) {
    if (waitVersion != null && waitVersion < 1) {
      throw new ParameterException(
          spec.commandLine(), "--wait-version: a version above 0, got " + waitVersion);
    }
    if (waitUpTo != null && waitVersion == null) {
      throw new ParameterException(
          spec.commandLine(),
          "--wait: only with --wait-version (without it, resolve answers at once)");
    }
    if (all && !statuses.isEmpty()) {
      throw new ParameterException(
          spec.commandLine(), "--status and --all: give one (--all is every status)");
    }
    ServiceFilter filter =
        ServiceFilters.narrowed(
            all ? ServiceFilter.serving().anyStatus() : ServiceFilter.serving(),
            zones,
            metadata,
            statuses);
    ResolvedService resolved =
        waitVersion == null
            ? client.blocking().resolve(service, filter)
            : client
                .blocking()
                .resolveChange(
                    service, filter, waitVersion, waitUpTo == null ? DEFAULT_WAIT : waitUpTo);
    Table table = RegistryView.instanceTable(out.wide());
    resolved.instances().forEach(i -> RegistryView.row(table, i, out.wide()));
    List<Map<String, Object>> instances =
        resolved.instances().stream().map(RegistryView::json).toList();
    if (waitVersion != null && out.json()) {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("version", resolved.version());
      json.put("revision", resolved.revision());
      json.put("zone", resolved.zone().orElse(""));
      json.put("instances", instances);
      out.print(json, table);
      return 0;
    }
    out.print(instances, table);
    if (!out.json()) {
      out.line(Map.of(), "version: " + resolved.version());
    }
    if (!zones.isEmpty() && !out.json()) {
      out.line(
          Map.of(),
          resolved
              .zone()
              .map(z -> "zone: " + z)
              .orElse("zone: none of " + String.join(",", zones) + " has a matching instance"));
    }
    return 0;
  }
}
