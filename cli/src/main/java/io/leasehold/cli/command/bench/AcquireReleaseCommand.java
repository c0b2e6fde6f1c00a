package io.leasehold.cli.command.bench;

import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.bench.AcquireRelease;
import io.leasehold.cli.bench.BenchReport;
import io.leasehold.cli.bench.LeaseholdTargets;
import io.leasehold.client.LeaseholdClient;
import java.time.Duration;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "acquire-release",
    mixinStandardHelpOptions = true,
    description = {
      "Acquire a fresh name, release it, again, from --clients concurrent workers. Closed loop "
          + "by default; --rate makes it open loop (latencies from when each cycle was due)."
    })
final class AcquireReleaseCommand extends BenchBase {
  @Option(
      names = "--clients",
      defaultValue = "16",
      paramLabel = "N",
      description = "Concurrent workers (default: ${DEFAULT-VALUE}).")
  int clients;

  @Option(
      names = "--rate",
      paramLabel = "CYCLES_PER_S",
      description = "Open loop at this many cycles a second in all.")
  Double rate;

  @Option(
      names = "--ttl",
      converter = DurationConverter.Positive.class,
      defaultValue = "30s",
      paramLabel = "DURATION",
      description = "TTL of each lease (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(
      names = "--transfer",
      description =
          "Hand each lease to another holder between the acquisition and the release (three writes a cycle).")
  boolean transfer;

  @Option(
      names = "--namespaces",
      defaultValue = "1",
      paramLabel = "N",
      description =
          "Spread the names over N namespaces, worker w using the prefix's namespace with w mod N"
              + " appended (bench0/, bench1/...): on a cluster with lease groups, each namespace is"
              + " placed on a group of its own while groups last (default: ${DEFAULT-VALUE}).")
  int namespaces;

  @Override
  public Integer call() throws Exception {
    positive("--clients", clients);
    positive("--namespaces", namespaces);
    checkDurations();
    if (rate != null && !(rate > 0)) {
      throw usage("--rate: must be positive, got " + rate);
    }
    List<String> endpoints = endpoints();
    int connections = options.connections == null ? 1 : options.connections;
    positive("--connections", connections);
    List<LeaseholdClient> sdk = clients(endpoints, connections);
    ExecutorService trampoline =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "bench-trampoline");
              t.setDaemon(true);
              return t;
            });
    try {
      AcquireRelease.Settings s =
          new AcquireRelease.Settings(
              clients,
              options.warmup,
              options.duration,
              rate == null ? OptionalDouble.empty() : OptionalDouble.of(rate),
              options.prefix,
              transfer,
              namespaces);
      BenchReport report =
          AcquireRelease.run(
              "leasehold",
              LeaseholdTargets.acquireRelease(sdk, ttl),
              s,
              stats(endpoints),
              trampoline,
              progress("acquire-release"));
      return print(
          report
              .setting("connections", connections)
              .setting("ttl_s", ttl.toSeconds())
              .setting("namespaces", namespaces));
    } finally {
      trampoline.shutdownNow();
      closeAll(sdk);
    }
  }

  @Override
  boolean failed(BenchReport report) {
    return number(report.result("failed")) > 0;
  }
}
