package io.leasehold.cli.command.bench;

import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code leasehold bench …}: load generators against a running cluster (and one it starts itself).
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
      "Measures a cluster under load through the Java SDK, as an application uses it: "
          + "throughput, latency percentiles (HdrHistogram) and what each node spent (from its "
          + "metrics port). Prints a table, or one JSON object with -o json (what "
          + "benchmarks/compare.sh reads).",
      "",
      "A node's JIT compiler needs a few minutes of load before its figures settle: warm up "
          + "(--warmup, or a discarded first run) before comparing."
    })
public final class BenchCommand implements Runnable {
  /**
   * Its subcommands, in the order help lists them; {@link io.leasehold.cli.CommandTree} adds them.
   */
  public static final List<Class<?>> SUBCOMMANDS =
      List.of(
          AcquireReleaseCommand.class,
          RenewCommand.class,
          ContendedLockCommand.class,
          WatchBenchCommand.class,
          FailoverCommand.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(),
        "a workload is required: acquire-release, renew, contended-lock, watch or failover");
  }
}
