package io.leasehold.cli.command.bench;

import io.leasehold.cli.DurationConverter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** Options every workload that runs against a cluster takes. */
final class BenchOptions {
  @Option(
      names = "--duration",
      converter = DurationConverter.Positive.class,
      defaultValue = "30s",
      paramLabel = "DURATION",
      description = "How long to measure (default: ${DEFAULT-VALUE}).")
  Duration duration;

  @Option(
      names = "--warmup",
      converter = DurationConverter.class,
      defaultValue = "10s",
      paramLabel = "DURATION",
      description = "Load before measuring, not counted (default: ${DEFAULT-VALUE}).")
  Duration warmup;

  @Option(
      names = "--connections",
      paramLabel = "N",
      description =
          "SDK clients (each with its own connections) the workers share (default: the workload's).")
  Integer connections;

  @Option(
      names = "--prefix",
      defaultValue = "bench/",
      paramLabel = "PREFIX",
      description =
          "Names are PREFIX<run>-<n> (default: ${DEFAULT-VALUE}); its namespace's policy applies.")
  String prefix;

  @Option(
      names = "--metrics",
      split = ",",
      paramLabel = "HOST:PORT",
      description =
          "Each node's metrics endpoint, for its CPU and memory (default: each endpoint's port + 2; 'off': none).")
  List<String> metrics = new ArrayList<>();
}
