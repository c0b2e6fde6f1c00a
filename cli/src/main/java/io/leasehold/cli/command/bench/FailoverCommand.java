package io.leasehold.cli.command.bench;

import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Json;
import io.leasehold.cli.LeaseholdCommand;
import io.leasehold.cli.OutputFormat;
import io.leasehold.cli.bench.BenchReport;
import io.leasehold.cli.bench.Failover;
import io.leasehold.cli.bench.LeaseholdTargets;
import io.leasehold.cli.bench.LocalCluster;
import io.leasehold.cli.bench.Progress;
import io.leasehold.client.LeaseholdClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "failover",
    mixinStandardHelpOptions = true,
    description = {
      "Starts a three-node cluster of its own (separate processes, from this jar, with the "
          + "launcher's JVM flags), holds --leases leases and probes with fresh acquisitions through "
          + "the SDK, and kills the leader's process (SIGKILL) --kills times, restarting it after "
          + "each. Reports the time from each kill to the next acquisition that succeeded, and leases "
          + "lost (exit code 1 if any)."
    })
final class FailoverCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--kills",
      defaultValue = "5",
      paramLabel = "N",
      description = "Leader kills (default: ${DEFAULT-VALUE}).")
  int kills;

  @Option(
      names = "--interval",
      converter = DurationConverter.Positive.class,
      defaultValue = "10s",
      paramLabel = "DURATION",
      description = "Time between a restart and the next kill (default: ${DEFAULT-VALUE}).")
  Duration interval;

  @Option(
      names = "--leases",
      defaultValue = "100",
      paramLabel = "N",
      description = "Leases held throughout (default: ${DEFAULT-VALUE}).")
  int leases;

  @Option(
      names = "--ttl",
      converter = DurationConverter.Positive.class,
      defaultValue = "15s",
      paramLabel = "DURATION",
      description = "TTL of the held leases (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(
      names = "--probe-rate",
      defaultValue = "20",
      paramLabel = "PER_S",
      description = "Probing acquisitions a second (default: ${DEFAULT-VALUE}).")
  double probeRate;

  @Option(
      names = "--dir",
      paramLabel = "DIR",
      description =
          "Where the nodes keep data and logs (default: a temporary directory, deleted after).")
  Path dir;

  @Option(
      names = "--jar",
      paramLabel = "JAR",
      description = "The Leasehold jar the nodes run (default: this command's own).")
  Path jar;

  @Override
  public Integer call() throws Exception {
    if (kills < 1 || leases < 0 || !(probeRate > 0)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          kills < 1
              ? "--kills: must be at least 1, got " + kills
              : leases < 0
                  ? "--leases: must not be negative, got " + leases
                  : "--probe-rate: must be positive, got " + probeRate);
    }
    boolean temporary = dir == null;
    Path where = temporary ? Files.createTempDirectory("leasehold-failover-") : dir;
    LeaseholdCommand globals = (LeaseholdCommand) spec.root().userObject();
    BenchReport report;
    try (LocalCluster cluster =
        LocalCluster.start(where, jar == null ? LocalCluster.ownJar() : jar)) {
      Duration timeout = globals.timeout();
      LeaseholdClient client =
          LeaseholdClient.builder()
              .endpoints(cluster.endpoints())
              .holder("bench-failover")
              .requestTimeout(timeout)
              .attemptTimeout(
                  timeout.compareTo(Duration.ofSeconds(5)) < 0 ? timeout : Duration.ofSeconds(5))
              .build();
      try (Failover.Target target = LeaseholdTargets.failover(client, ttl)) {
        report =
            Failover.run(
                "leasehold",
                cluster,
                target,
                new Failover.Settings(kills, interval, leases, ttl, probeRate, "bench/failover-"),
                Progress.onTerminal(spec.commandLine().getErr(), "failover"));
      }
    } finally {
      if (temporary) {
        deleteTree(where);
      }
    }
    if (globals.output() == OutputFormat.JSON) {
      spec.commandLine().getOut().println(Json.compact(report.json()));
      spec.commandLine().getOut().flush();
    } else {
      report.printTable(spec.commandLine().getOut());
    }
    return BenchBase.number(report.result("leases_lost")) > 0
        ? LeaseholdCommand.EXIT_FAILED
        : LeaseholdCommand.EXIT_OK;
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
