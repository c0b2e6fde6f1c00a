package io.leasehold.cli.command.bench;

import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.bench.BenchReport;
import io.leasehold.cli.bench.LeaseholdTargets;
import io.leasehold.cli.bench.Renew;
import io.leasehold.client.LeaseholdClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "renew",
    mixinStandardHelpOptions = true,
    description = {
      "--clients SDK clients acquire --leases leases between them and keep them alive at the "
          + "SDK's own interval for --duration. Reports renewals/s, false expiries (leases that ended "
          + "while their client kept them alive: exit code 1 if any), and each node's cores and "
          + "memory. With --sessions each client attaches its leases to its session (one keep-alive item "
          + "a heartbeat per client, whatever its leases) instead of renewing each lease. With --batch each "
          + "client acquires its leases in acquireAll calls of up to 1,000 names."
    })
final class RenewCommand extends BenchBase {
  /** Clients closed at once after a --sessions run (each close is one CloseSession). */
  private static final int CLOSING_THREADS = 16;

  @Option(
      names = "--clients",
      defaultValue = "10",
      paramLabel = "N",
      description = "SDK clients (default: ${DEFAULT-VALUE}).")
  int clients;

  @Option(
      names = "--leases",
      defaultValue = "10000",
      paramLabel = "N",
      description = "Leases in all (default: ${DEFAULT-VALUE}).")
  int leases;

  @Option(
      names = "--ttl",
      converter = DurationConverter.Positive.class,
      defaultValue = "10s",
      paramLabel = "DURATION",
      description = "TTL of each lease (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(
      names = "--sessions",
      description =
          "Attach each client's leases to its session, of --ttl, instead of giving each its own TTL.")
  boolean sessions;

  @Option(
      names = "--batch",
      description =
          "Acquire each client's leases through acquireAll (up to 1,000 names a call) instead of "
              + "one tryAcquire call a name.")
  boolean batch;

  @Override
  public Integer call() throws Exception {
    positive("--clients", clients);
    positive("--leases", leases);
    checkDurations();
    if (options.connections != null) {
      throw usage("--connections: not used by renew (each of --clients is an SDK client)");
    }
    List<String> endpoints = endpoints();
    List<LeaseholdClient> sdk =
        sessions
            ? clients(endpoints, clients, b -> b.sessionTtl(ttl))
            : clients(endpoints, clients);
    ExecutorService closing =
        Executors.newFixedThreadPool(
            CLOSING_THREADS,
            r -> {
              Thread t = new Thread(r, "bench-renew-close");
              t.setDaemon(true);
              return t;
            });
    try {
      // The warm-up is the settling time after the leases are in, at least half a TTL: the SDK
      // renews at a third of it, so every lease has been renewed by then.
      Duration settle =
          options.warmup.compareTo(ttl.dividedBy(2)) < 0 ? ttl.dividedBy(2) : options.warmup;
      Renew.Settings s =
          new Renew.Settings(clients, leases, ttl, settle, options.duration, options.prefix);
      Renew.Target target =
          sessions
              ? LeaseholdTargets.renewInSessions(sdk, closing, batch)
              : LeaseholdTargets.renew(sdk, ttl, batch);
      return print(Renew.run("leasehold", target, s, stats(endpoints), progress("renew")));
    } finally {
      closing.shutdownNow();
      closeAll(sdk);
    }
  }

  @Override
  boolean failed(BenchReport report) {
    return number(report.result("false_expiries")) > 0;
  }
}
