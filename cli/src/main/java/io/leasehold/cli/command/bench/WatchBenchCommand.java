package io.leasehold.cli.command.bench;

import io.leasehold.cli.ClientTls;
import io.leasehold.cli.bench.BenchReport;
import io.leasehold.cli.bench.LeaseholdTargets;
import io.leasehold.cli.bench.WatchLatency;
import io.leasehold.client.LeaseholdClient;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "watch",
    mixinStandardHelpOptions = true,
    description = {
      "Acquisitions at a fixed --rate while a watcher follows them on the leader and another on a",
      "follower: how long after each write was sent (and answered) its event arrived, and whether",
      "every event did (exit code 1 if one is missing)."
    })
final class WatchBenchCommand extends BenchBase {
  @Option(
      names = "--rate",
      defaultValue = "100",
      paramLabel = "WRITES_PER_S",
      description = "Writes a second (default: ${DEFAULT-VALUE}).")
  double rate;

  @Override
  public Integer call() throws Exception {
    if (!(rate > 0)) {
      throw usage("--rate: must be positive, got " + rate);
    }
    checkDurations();
    List<String> endpoints = endpoints();
    ClientTls tls = globals().tls();
    try (LeaseholdClient writer = client(endpoints, "bench-watch-writer")) {
      WatchLatency.Settings s =
          new WatchLatency.Settings(rate, options.warmup, options.duration, options.prefix);
      Duration ttl = options.warmup.plus(options.duration).plusMinutes(1);
      WatchLatency.Target target =
          LeaseholdTargets.watch(
              writer,
              address ->
                  tls.configure(LeaseholdClient.builder())
                      .endpoints(address)
                      .discoverMembers(false)
                      .preferLeader(false)
                      .build(),
              ttl);
      return print(WatchLatency.run("leasehold", target, s, stats(endpoints), progress("watch")));
    }
  }

  @Override
  boolean failed(BenchReport report) {
    return number(report.result("leader_events_missing")) > 0
        || number(report.result("follower_events_missing")) > 0;
  }
}
