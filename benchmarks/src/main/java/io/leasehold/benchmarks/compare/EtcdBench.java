package io.leasehold.benchmarks.compare;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Json;
import io.leasehold.cli.bench.AcquireRelease;
import io.leasehold.cli.bench.BenchReport;
import io.leasehold.cli.bench.ContendedLock;
import io.leasehold.cli.bench.Failover;
import io.leasehold.cli.bench.NodeStats;
import io.leasehold.cli.bench.Progress;
import io.leasehold.cli.bench.Renew;
import io.leasehold.cli.bench.WatchLatency;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code leasehold bench}'s workloads against etcd through jetcd, with the same load loop,
 * recorders and report: what {@code benchmarks/compare.sh} sets beside Leasehold's figures. Prints
 * one JSON object a run (or a table with {@code -o table}).
 *
 * <pre>
 *   java -cp benchmarks/target/benchmarks.jar io.leasehold.benchmarks.compare.EtcdBench \
 *     --endpoints 127.0.0.1:2379,... acquire-release --shape session --clients 16
 * </pre>
 */
@Command(
    name = "etcd-bench",
    mixinStandardHelpOptions = true,
    subcommands = {
      EtcdBench.AcquireReleaseRun.class,
      EtcdBench.RenewRun.class,
      EtcdBench.LockRun.class,
      EtcdBench.WatchRun.class,
      EtcdBench.FailoverRun.class
    })
public final class EtcdBench implements Runnable {
  @Option(
      names = "--endpoints",
      split = ",",
      defaultValue = "127.0.0.1:2379",
      paramLabel = "HOST:PORT",
      description = "etcd client addresses (default: ${DEFAULT-VALUE}).")
  List<String> endpoints;

  @Option(
      names = {"-o", "--output"},
      defaultValue = "json",
      paramLabel = "json|table",
      description = "json (default) or table.")
  String output;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    int code = new CommandLine(new EtcdBench()).execute(args);
    System.exit(code);
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a workload is required");
  }

  static Client client(List<String> endpoints) {
    return Client.builder()
        .endpoints(endpoints.stream().map(e -> "http://" + e.trim()).toArray(String[]::new))
        .build();
  }

  /** etcd serves its Prometheus metrics on the client URL. */
  static NodeStats stats(List<String> endpoints) {
    return new NodeStats(endpoints);
  }

  static int print(EtcdBench root, BenchReport report) {
    if (root.output.equals("table")) {
      report.printTable(new PrintWriter(System.out, true));
    } else {
      System.out.println(Json.compact(report.json()));
    }
    return 0;
  }

  static final class Common {
    @Option(names = "--duration", converter = DurationConverter.class, defaultValue = "30s")
    Duration duration;

    @Option(names = "--warmup", converter = DurationConverter.class, defaultValue = "10s")
    Duration warmup;

    @Option(names = "--connections")
    Integer connections;

    @Option(names = "--prefix", defaultValue = "bench/")
    String prefix;
  }

  @Command(
      name = "acquire-release",
      description = "Create-if-absent a fresh key with a lease, then let it go.")
  static final class AcquireReleaseRun implements Callable<Integer> {
    @CommandLine.ParentCommand EtcdBench root;
    @Mixin Common common;

    @Option(names = "--clients", defaultValue = "16")
    int clients;

    @Option(names = "--rate")
    Double rate;

    @Option(names = "--ttl", converter = DurationConverter.class, defaultValue = "30s")
    Duration ttl;

    @Option(
        names = "--shape",
        defaultValue = "session",
        description =
            "session: concurrency.Mutex's shape, one session lease a worker, create then delete (two writes); "
                + "lease: a lease per name, grant, create, revoke (three writes).")
    String shape;

    @Option(
        names = "--windows",
        converter = DurationConverter.class,
        description = "Also report the measured period window by window, this long each (e.g. 5s).")
    Duration window;

    @Option(
        names = "--phase",
        description = "A label for the run in the report (compare.sh: cold).")
    String phase;

    @Override
    public Integer call() throws Exception {
      EtcdTargets.Shape s =
          switch (shape) {
            case "session" -> EtcdTargets.Shape.SESSION;
            case "lease" -> EtcdTargets.Shape.LEASE_PER_NAME;
            default ->
                throw new CommandLine.ParameterException(
                    new CommandLine(this), "--shape: session or lease, got " + shape);
          };
      if (window != null && (window.isZero() || window.compareTo(common.duration) > 0)) {
        throw new CommandLine.ParameterException(
            new CommandLine(this), "--windows: must be positive and no longer than --duration");
      }
      int n = common.connections == null ? 1 : common.connections;
      List<Client> clients = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        clients.add(client(root.endpoints));
      }
      ExecutorService trampoline = Executors.newSingleThreadExecutor();
      try {
        List<AcquireRelease.Target<EtcdTargets.Held>> perClient = new ArrayList<>();
        for (Client c : clients) {
          perClient.add(
              EtcdTargets.acquireRelease(
                  c, s, ttl, clients.size() == 1 ? this.clients : this.clients));
        }
        AcquireRelease.Target<EtcdTargets.Held> target =
            new AcquireRelease.Target<>() {
              @Override
              public CompletableFuture<EtcdTargets.Held> acquire(int worker, String name) {
                return perClient.get(worker % perClient.size()).acquire(worker, name);
              }

              @Override
              public CompletableFuture<Void> release(int worker, EtcdTargets.Held held) {
                return perClient.get(worker % perClient.size()).release(worker, held);
              }
            };
        // Counts failures by kind and, with --windows, each window's figures; no back-off, as
        // before.
        TalliedTarget<EtcdTargets.Held> tallied =
            new TalliedTarget<>(target, window == null ? Duration.ZERO : window, Duration.ZERO);
        tallied.start(common.duration);
        BenchReport report =
            AcquireRelease.run(
                "etcd-" + shape,
                tallied,
                new AcquireRelease.Settings(
                    this.clients,
                    common.warmup,
                    common.duration,
                    rate == null ? OptionalDouble.empty() : OptionalDouble.of(rate),
                    common.prefix),
                stats(root.endpoints),
                trampoline,
                Progress.off());
        report.setting("connections", n).setting("ttl_s", ttl.toSeconds());
        if (phase != null) {
          report.setting("phase", phase);
        }
        return print(root, tallied.addTo(report));
      } finally {
        trampoline.shutdownNow();
        clients.forEach(Client::close);
      }
    }
  }

  @Command(
      name = "renew",
      description = "Keep many keys alive: one session lease a client, every key attached.")
  static final class RenewRun implements Callable<Integer> {
    @CommandLine.ParentCommand EtcdBench root;
    @Mixin Common common;

    @Option(names = "--clients", defaultValue = "10")
    int clients;

    @Option(names = "--leases", defaultValue = "10000")
    int leases;

    @Option(names = "--ttl", converter = DurationConverter.class, defaultValue = "10s")
    Duration ttl;

    @Override
    public Integer call() throws Exception {
      List<Client> cs = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        cs.add(client(root.endpoints));
      }
      try {
        Duration settle =
            common.warmup.compareTo(ttl.dividedBy(2)) < 0 ? ttl.dividedBy(2) : common.warmup;
        return print(
            root,
            Renew.run(
                "etcd",
                EtcdTargets.renew(cs, ttl),
                new Renew.Settings(clients, leases, ttl, settle, common.duration, common.prefix),
                stats(root.endpoints),
                Progress.off()));
      } finally {
        cs.forEach(Client::close);
      }
    }
  }

  @Command(
      name = "contended-lock",
      description = "etcd's lock service, workers taking turns on a few names.")
  static final class LockRun implements Callable<Integer> {
    @CommandLine.ParentCommand EtcdBench root;
    @Mixin Common common;

    @Option(names = "--clients", defaultValue = "16")
    int clients;

    @Option(names = "--names", defaultValue = "2")
    int names;

    @Option(names = "--hold", converter = DurationConverter.class, defaultValue = "0s")
    Duration hold;

    @Option(names = "--ttl", converter = DurationConverter.class, defaultValue = "15s")
    Duration ttl;

    @Override
    public Integer call() throws Exception {
      int n = common.connections == null ? clients : common.connections;
      List<Client> cs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        cs.add(client(root.endpoints));
      }
      try {
        BenchReport report =
            ContendedLock.run(
                "etcd",
                EtcdTargets.lock(cs, ttl, clients),
                new ContendedLock.Settings(
                    clients, names, hold, common.warmup, common.duration, common.prefix),
                stats(root.endpoints),
                Progress.off());
        return print(root, report.setting("connections", n));
      } finally {
        cs.forEach(Client::close);
      }
    }
  }

  @Command(
      name = "watch",
      description = "Creates at a fixed rate, watched on the leader and on a follower.")
  static final class WatchRun implements Callable<Integer> {
    @CommandLine.ParentCommand EtcdBench root;
    @Mixin Common common;

    @Option(names = "--rate", defaultValue = "100")
    double rate;

    @Override
    public Integer call() throws Exception {
      try (Client writer = client(root.endpoints)) {
        String leader = null;
        String follower = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (leader == null || follower == null) {
          leader = null;
          follower = null;
          for (String e : root.endpoints) {
            StatusResponse s =
                writer.getMaintenanceClient().statusMember("http://" + e.trim()).get();
            if (s.getLeader() != 0 && s.getLeader() == s.getHeader().getMemberId()) {
              leader = e.trim();
            } else if (follower == null) {
              follower = e.trim();
            }
          }
          if ((leader == null || follower == null) && System.nanoTime() > deadline) {
            throw new IllegalStateException("need a leader and a follower among " + root.endpoints);
          }
          if (leader == null || follower == null) {
            Thread.sleep(200);
          }
        }
        WatchLatency.Target target =
            EtcdTargets.watch(writer, leader, follower, e -> client(List.of(e)));
        return print(
            root,
            WatchLatency.run(
                "etcd",
                target,
                new WatchLatency.Settings(rate, common.warmup, common.duration, common.prefix),
                stats(root.endpoints),
                Progress.off()));
      }
    }
  }

  @Command(
      name = "failover",
      description = "Kills the leader of an etcd cluster of its own, again and again.")
  static final class FailoverRun implements Callable<Integer> {
    @CommandLine.ParentCommand EtcdBench root;

    @Option(names = "--kills", defaultValue = "5")
    int kills;

    @Option(names = "--interval", converter = DurationConverter.class, defaultValue = "10s")
    Duration interval;

    @Option(names = "--leases", defaultValue = "100")
    int leases;

    @Option(names = "--ttl", converter = DurationConverter.class, defaultValue = "15s")
    Duration ttl;

    @Option(names = "--probe-rate", defaultValue = "20")
    double probeRate;

    @Option(
        names = "--etcd",
        defaultValue = "etcd",
        description = "The etcd binary (default: ${DEFAULT-VALUE} on PATH).")
    String etcd;

    @Override
    public Integer call() throws Exception {
      Path dir = Files.createTempDirectory("etcd-failover-");
      BenchReport report;
      try (EtcdCluster cluster = EtcdCluster.start(dir, etcd);
          Failover.Target target = EtcdTargets.failover(client(cluster.endpoints()), ttl)) {
        report =
            Failover.run(
                "etcd",
                cluster,
                target,
                new Failover.Settings(kills, interval, leases, ttl, probeRate, "bench/failover-"),
                Progress.off());
      } finally {
        try (var paths = Files.walk(dir)) {
          for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
            Files.deleteIfExists(p);
          }
        }
      }
      return print(root, report);
    }
  }
}
