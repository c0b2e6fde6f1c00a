package io.leasehold.cli.command.bench;

import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.bench.BenchReport;
import io.leasehold.cli.bench.ContendedLock;
import io.leasehold.cli.bench.LeaseholdTargets;
import io.leasehold.client.LeaseholdClient;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "contended-lock",
    mixinStandardHelpOptions = true,
    description = {
      "--clients workers take turns on --names locks (LeaseLock), each holder writing to a "
          + "resource fenced by its token. Reports hand-overs/s, lock wait, and fencing or exclusion "
          + "violations (exit code 1 if any)."
    })
final class ContendedLockCommand extends BenchBase {
  @Option(
      names = "--clients",
      defaultValue = "16",
      paramLabel = "N",
      description = "Workers (default: ${DEFAULT-VALUE}).")
  int clients;

  @Option(
      names = "--names",
      defaultValue = "2",
      paramLabel = "N",
      description = "Locks they share (default: ${DEFAULT-VALUE}).")
  int names;

  @Option(
      names = "--hold",
      converter = DurationConverter.class,
      defaultValue = "0s",
      paramLabel = "DURATION",
      description =
          "How long a holder keeps the lock before unlocking (default: ${DEFAULT-VALUE}).")
  Duration hold;

  @Option(
      names = "--ttl",
      converter = DurationConverter.Positive.class,
      defaultValue = "15s",
      paramLabel = "DURATION",
      description = "TTL of each lock's lease (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  @Override
  public Integer call() throws Exception {
    positive("--clients", clients);
    positive("--names", names);
    checkDurations();
    List<String> endpoints = endpoints();
    // Each worker its own SDK client by default: a lock's waiters are different processes.
    int connections = options.connections == null ? clients : options.connections;
    positive("--connections", connections);
    List<LeaseholdClient> sdk = clients(endpoints, connections);
    try {
      ContendedLock.Settings s =
          new ContendedLock.Settings(
              clients, names, hold, options.warmup, options.duration, options.prefix);
      BenchReport report =
          ContendedLock.run(
              "leasehold",
              LeaseholdTargets.lock(sdk, ttl),
              s,
              stats(endpoints),
              progress("contended-lock"));
      return print(report.setting("connections", connections));
    } finally {
      closeAll(sdk);
    }
  }

  @Override
  boolean failed(BenchReport report) {
    return number(report.result("fencing_violations")) > 0
        || number(report.result("exclusion_violations")) > 0;
  }
}
