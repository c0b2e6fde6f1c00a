package io.leasehold.cli.command.bench;

import io.leasehold.cli.Await;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.Json;
import io.leasehold.cli.LeaseholdCommand;
import io.leasehold.cli.OutputFormat;
import io.leasehold.cli.bench.BenchReport;
import io.leasehold.cli.bench.NodeStats;
import io.leasehold.cli.bench.Progress;
import io.leasehold.client.CallerIdentity;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.UnaryOperator;
import picocli.CommandLine;

/**
 * A workload against the cluster the global {@code --endpoints} name: makes its SDK clients, runs,
 * prints the report, and closes them. Exit code 1 if the run saw a violation or failure the
 * workload counts ({@link #failed}).
 */
abstract class BenchBase implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @CommandLine.Mixin BenchOptions options;

  LeaseholdCommand globals() {
    return (LeaseholdCommand) spec.root().userObject();
  }

  PrintWriter err() {
    return spec.commandLine().getErr();
  }

  CommandLine.ParameterException usage(String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }

  List<String> endpoints() {
    List<String> endpoints = new ArrayList<>();
    for (String e : globals().endpoints()) {
      if (!ClientCommand.isHostPort(e)) {
        throw usage("--endpoints: '" + e + "' is not host:port");
      }
      endpoints.add(e.trim());
    }
    if (endpoints.isEmpty()) {
      throw usage("--endpoints: at least one host:port is required");
    }
    return endpoints;
  }

  NodeStats stats(List<String> endpoints) {
    if (options.metrics.size() == 1 && options.metrics.get(0).equalsIgnoreCase("off")) {
      return new NodeStats(List.of());
    }
    for (String m : options.metrics) {
      if (!ClientCommand.isHostPort(m)) {
        throw usage("--metrics: '" + m + "' is not host:port (or 'off')");
      }
    }
    return new NodeStats(
        options.metrics.isEmpty() ? NodeStats.defaultMetricsAddresses(endpoints) : options.metrics,
        globals().tls().sslContext());
  }

  /**
   * An SDK client of the cluster, as {@code ClientCommand} makes one, with {@code holder} (on a
   * cluster that authenticates, the caller's identity instead: it may hold leases as itself only).
   */
  LeaseholdClient client(List<String> endpoints, String holder) {
    return client(endpoints, holder, UnaryOperator.identity());
  }

  LeaseholdClient client(
      List<String> endpoints, String holder, UnaryOperator<LeaseholdClientBuilder> tweak) {
    Duration timeout = globals().timeout();
    LeaseholdClientBuilder b =
        globals()
            .tls()
            .configure(LeaseholdClient.builder())
            .endpoints(endpoints)
            .requestTimeout(timeout)
            .attemptTimeout(
                timeout.compareTo(Duration.ofSeconds(5)) < 0 ? timeout : Duration.ofSeconds(5));
    globals().token().ifPresent(b::bearerToken);
    if (identity == null) {
      try (LeaseholdClient probe = b.holder(holder).build()) {
        CallerIdentity me = Await.of(probe.auth().whoAmI());
        identity = me.authenticationEnabled() ? me.identity() : "";
      }
    }
    return tweak.apply(b.holder(identity.isEmpty() ? holder : identity)).build();
  }

  /** Who the cluster takes the bench to be: "" when it does not authenticate; null until asked. */
  private String identity;

  List<LeaseholdClient> clients(List<String> endpoints, int n) {
    return clients(endpoints, n, UnaryOperator.identity());
  }

  List<LeaseholdClient> clients(
      List<String> endpoints, int n, UnaryOperator<LeaseholdClientBuilder> tweak) {
    List<LeaseholdClient> clients = new ArrayList<>();
    String run = Long.toString(System.currentTimeMillis(), 36);
    for (int i = 0; i < n; i++) {
      clients.add(client(endpoints, "bench-" + run + "-" + i, tweak));
    }
    return clients;
  }

  static void closeAll(List<LeaseholdClient> clients) {
    clients.forEach(LeaseholdClient::close);
  }

  Progress progress(String label) {
    return Progress.onTerminal(err(), label);
  }

  void positive(String option, long value) {
    if (value < 1) {
      throw usage(option + ": must be at least 1, got " + value);
    }
  }

  void checkDurations() {
    if (options.duration.isZero()) {
      throw usage("--duration: must be positive");
    }
  }

  int print(BenchReport report) {
    PrintWriter out = spec.commandLine().getOut();
    if (globals().output() == OutputFormat.JSON) {
      out.println(Json.compact(report.json()));
      out.flush();
    } else {
      report.printTable(out);
    }
    return failed(report) ? LeaseholdCommand.EXIT_FAILED : LeaseholdCommand.EXIT_OK;
  }

  /** Whether the run saw what must not happen (a violation) or could not do its work. */
  abstract boolean failed(BenchReport report);

  static long number(Object value) {
    return value instanceof Number n ? n.longValue() : 0;
  }
}
