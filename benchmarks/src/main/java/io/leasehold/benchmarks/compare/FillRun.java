package io.leasehold.benchmarks.compare;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Json;
import io.leasehold.cli.bench.NodeStats;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.RenewResult;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Fills a cluster with live leases through the generated stubs, as many raw clients would, and
 * reports each node's resident memory before, right after, and after a settling wait: the figure
 * behind "N live leases fit in so much memory a node". Names are {@code PREFIX<run>-<i>}; every
 * worker's leases share its holder, unless {@code --holder-per-lease} gives each its own (as
 * registry instances do). A refused or failed call is retried for the same name after a back-off,
 * so the run ends with exactly {@code --leases} granted. With {@code --renew-for}, the workers then
 * renew their leases in batches for that long, as clients keeping them alive do, and the last
 * readings are taken after that.
 *
 * <pre>
 *   java -cp benchmarks/target/benchmarks.jar io.leasehold.benchmarks.compare.RawBench \
 *     --endpoints 127.0.0.1:7400,127.0.0.1:7410,127.0.0.1:7420 fill --leases 1000000 --clients 64
 * </pre>
 */
@Command(
    name = "fill",
    mixinStandardHelpOptions = true,
    description =
        "Acquire N leases with a long TTL and keep them; report each node's RSS before and after.")
final class FillRun implements Callable<Integer> {
  @CommandLine.ParentCommand RawBench root;
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--leases",
      defaultValue = "100000",
      paramLabel = "N",
      description = "Leases to hold at the end (default: ${DEFAULT-VALUE}).")
  long leases;

  @Option(
      names = "--clients",
      defaultValue = "32",
      paramLabel = "N",
      description = "Concurrent workers (default: ${DEFAULT-VALUE}).")
  int clients;

  @Option(
      names = "--leader-only",
      description = "Every worker calls the leader (default: worker i calls node i mod n).")
  boolean leaderOnly;

  @Option(
      names = "--ttl",
      converter = DurationConverter.class,
      defaultValue = "2h",
      paramLabel = "DURATION",
      description =
          "TTL of each lease (default: ${DEFAULT-VALUE}): long enough that none expires while measured.")
  Duration ttl;

  @Option(
      names = "--holder-per-lease",
      description = "A holder of its own for every lease (default: one per worker).")
  boolean holderPerLease;

  @Option(
      names = "--prefix",
      defaultValue = "fill/",
      paramLabel = "PREFIX",
      description = "Names start with PREFIX (default: ${DEFAULT-VALUE}).")
  String prefix;

  @Option(
      names = "--settle",
      converter = DurationConverter.class,
      defaultValue = "30s",
      paramLabel = "DURATION",
      description =
          "How long to wait after the last grant before the last memory reading (default: ${DEFAULT-VALUE}).")
  Duration settle;

  @Option(
      names = "--renew-for",
      converter = DurationConverter.class,
      defaultValue = "0s",
      paramLabel = "DURATION",
      description =
          "After the fill, renew every lease again and again for this long, each worker its own leases in "
              + "batches (default: ${DEFAULT-VALUE}, none): the steady state of clients that keep their leases alive.")
  Duration renewFor;

  @Option(
      names = "--renew-batch",
      defaultValue = "500",
      paramLabel = "N",
      description = "Leases a Renew call carries in the renew phase (default: ${DEFAULT-VALUE}).")
  int renewBatch;

  @Option(
      names = "--deadline",
      converter = DurationConverter.class,
      defaultValue = "10s",
      paramLabel = "DURATION",
      description = "Deadline of each call (default: ${DEFAULT-VALUE}).")
  Duration deadline;

  @Option(
      names = "--metrics",
      split = ",",
      paramLabel = "HOST:PORT",
      description = "Each node's metrics endpoint (default: each endpoint's port + 2).")
  List<String> metrics = new ArrayList<>();

  private CommandLine.ParameterException usage(String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }

  @Override
  public Integer call() throws Exception {
    List<String> endpoints = root.endpoints(this::usage);
    if (leases < 1) {
      throw usage("--leases: must be at least 1, got " + leases);
    }
    if (clients < 1) {
      throw usage("--clients: must be at least 1, got " + clients);
    }
    if (ttl.isZero() || ttl.isNegative()) {
      throw usage("--ttl: must be positive");
    }
    if (deadline.isZero() || deadline.isNegative()) {
      throw usage("--deadline: must be positive");
    }
    if (settle.isNegative()) {
      throw usage("--settle: must not be negative");
    }
    if (renewFor.isNegative()) {
      throw usage("--renew-for: must not be negative");
    }
    if (renewBatch < 1) {
      throw usage("--renew-batch: must be at least 1, got " + renewBatch);
    }
    if (leases > Integer.MAX_VALUE - 8) {
      throw usage("--leases: at most " + (Integer.MAX_VALUE - 8) + ", got " + leases);
    }
    for (String m : metrics) {
      if (!ClientCommand.isHostPort(m)) {
        throw usage("--metrics: '" + m + "' is not host:port");
      }
    }
    NodeStats stats =
        new NodeStats(metrics.isEmpty() ? NodeStats.defaultMetricsAddresses(endpoints) : metrics);
    List<String> targets = endpoints;
    if (leaderOnly) {
      targets =
          List.of(
              RawBench.findLeader(endpoints, Duration.ofSeconds(30))
                  .orElseThrow(
                      () ->
                          usage(
                              "--leader-only: no node among "
                                  + endpoints
                                  + " said it leads within 30s")));
    }
    List<NodeStats.Sample> before = stats.sample();
    List<NodeStats.Sample> filled = new ArrayList<>();
    Map<String, Object> report = new LinkedHashMap<>();
    List<ManagedChannel> channels = targets.stream().map(RawBench::channel).toList();
    String run = Long.toString(System.currentTimeMillis(), 36);
    com.google.protobuf.Duration ttlProto =
        com.google.protobuf.Duration.newBuilder()
            .setSeconds(ttl.getSeconds())
            .setNanos(ttl.getNano())
            .build();
    // Each lease's token, for the renew phase; worker w holds the leases it was granted.
    long[] tokens = new long[(int) leases];
    List<List<Integer>> heldBy = new ArrayList<>();
    for (int w = 0; w < clients; w++) {
      heldBy.add(new ArrayList<>());
    }
    AtomicLong next = new AtomicLong();
    AtomicLong granted = new AtomicLong();
    Map<String, AtomicLong> failures = new ConcurrentHashMap<>();
    long start = System.nanoTime();
    List<Thread> workers = new ArrayList<>();
    try {
      for (int w = 0; w < clients; w++) {
        int worker = w;
        LeasesGrpc.LeasesBlockingStub stub =
            LeasesGrpc.newBlockingStub(channels.get(w % channels.size()));
        Thread thread =
            new Thread(
                () -> {
                  for (long i = next.getAndIncrement(); i < leases; i = next.getAndIncrement()) {
                    String name = prefix + run + "-" + i;
                    String holder =
                        holderPerLease ? "fill-" + run + "-" + i : "fill-" + run + "-w" + worker;
                    AcquireRequest request =
                        AcquireRequest.newBuilder()
                            .setName(name)
                            .setHolder(holder)
                            .setTtl(ttlProto)
                            .build();
                    while (true) {
                      String failure;
                      try {
                        AcquireResponse r =
                            stub.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS)
                                .acquire(request);
                        if (r.getOutcome() == Outcome.GRANTED) {
                          tokens[(int) i] = r.getLease().getToken();
                          heldBy.get(worker).add((int) i);
                          granted.incrementAndGet();
                          break;
                        }
                        failure =
                            r.getOutcome() == Outcome.REJECTED
                                ? "REJECTED " + r.getRejection().getReason()
                                : r.getOutcome().name();
                      } catch (StatusRuntimeException e) {
                        failure = e.getStatus().getCode().name();
                      }
                      failures.computeIfAbsent(failure, k -> new AtomicLong()).incrementAndGet();
                      try {
                        Thread.sleep(100);
                      } catch (InterruptedException e) {
                        return;
                      }
                    }
                  }
                },
                "fill-" + w);
        thread.setDaemon(true);
        thread.start();
        workers.add(thread);
      }
      PrintWriter err = spec.commandLine().getErr();
      long lastReport = System.nanoTime();
      for (Thread t : workers) {
        for (t.join(1000); t.isAlive(); t.join(1000)) {
          if (System.nanoTime() - lastReport > TimeUnit.SECONDS.toNanos(10)) {
            lastReport = System.nanoTime();
            double s = (lastReport - start) / 1e9;
            err.printf(
                "fill: %,d of %,d granted in %.0f s (%.0f/s)%n",
                granted.get(), leases, s, granted.get() / s);
            err.flush();
          }
        }
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      report.put("seconds", Math.round(seconds * 10) / 10.0);
      report.put("grants_per_s", Math.round(leases / seconds));
      filled.addAll(stats.sample());
      if (!renewFor.isZero()) {
        renewPhase(channels, run, tokens, heldBy, failures, report);
      }
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
    }
    Thread.sleep(settle.toMillis());
    List<NodeStats.Sample> settled = stats.sample();

    report.put("system", RawBench.SYSTEM);
    report.put("workload", "fill");
    report.put("leases", leases);
    report.put("clients", clients);
    report.put("mode", leaderOnly ? "leader" : "spread");
    report.put("holders", holderPerLease ? "one per lease" : "one per worker");
    Map<String, Long> failed = new LinkedHashMap<>();
    failures.forEach((k, v) -> failed.put(k, v.get()));
    report.put("failures", failed);
    List<Map<String, Object>> nodes = new ArrayList<>();
    for (int i = 0; i < before.size(); i++) {
      Map<String, Object> node = new LinkedHashMap<>();
      node.put("metrics", before.get(i).node());
      double rss0 = before.get(i).get(NodeStats.RSS).orElse(Double.NaN);
      double rss1 = filled.get(i).get(NodeStats.RSS).orElse(Double.NaN);
      double rss2 = settled.get(i).get(NodeStats.RSS).orElse(Double.NaN);
      node.put("rss_before_mib", mib(rss0));
      node.put("rss_filled_mib", mib(rss1));
      node.put("rss_settled_mib", mib(rss2));
      node.put("bytes_per_lease", Math.round((rss2 - rss0) / leases));
      settled.get(i).get(NodeStats.LIVE).ifPresent(v -> node.put("live_leases", v.longValue()));
      nodes.add(node);
    }
    report.put("nodes", nodes);
    PrintWriter out = spec.commandLine().getOut();
    out.println(Json.compact(report));
    out.flush();
    return granted.get() == leases ? 0 : 1;
  }

  /**
   * Every worker renews its own leases, batch after batch, for {@code --renew-for}; counts what was
   * not renewed.
   */
  private void renewPhase(
      List<ManagedChannel> channels,
      String run,
      long[] tokens,
      List<List<Integer>> heldBy,
      Map<String, AtomicLong> failures,
      Map<String, Object> report)
      throws InterruptedException {
    AtomicLong renewed = new AtomicLong();
    AtomicLong notRenewed = new AtomicLong();
    long start = System.nanoTime();
    long end = start + renewFor.toNanos();
    List<Thread> workers = new ArrayList<>();
    for (int w = 0; w < clients; w++) {
      List<Integer> mine = heldBy.get(w);
      LeasesGrpc.LeasesBlockingStub stub =
          LeasesGrpc.newBlockingStub(channels.get(w % channels.size()));
      Thread t =
          new Thread(
              () -> {
                int from = 0;
                while (System.nanoTime() - end < 0 && !mine.isEmpty()) {
                  RenewRequest.Builder request = RenewRequest.newBuilder();
                  for (int k = 0; k < renewBatch && k < mine.size(); k++) {
                    int i = mine.get((from + k) % mine.size());
                    request.addItems(
                        RenewItem.newBuilder().setName(prefix + run + "-" + i).setToken(tokens[i]));
                  }
                  from = (from + renewBatch) % mine.size();
                  try {
                    RenewResponse r =
                        stub.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS)
                            .renew(request.build());
                    for (RenewResult result : r.getResultsList()) {
                      if (result.getOutcome() == Outcome.RENEWED) {
                        renewed.incrementAndGet();
                      } else {
                        notRenewed.incrementAndGet();
                        failures
                            .computeIfAbsent(
                                "renew " + result.getOutcome().name(), k -> new AtomicLong())
                            .incrementAndGet();
                      }
                    }
                  } catch (StatusRuntimeException e) {
                    failures
                        .computeIfAbsent(
                            "renew " + e.getStatus().getCode().name(), k -> new AtomicLong())
                        .incrementAndGet();
                  }
                }
              },
              "renew-" + w);
      t.setDaemon(true);
      t.start();
      workers.add(t);
    }
    for (Thread t : workers) {
      t.join();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    report.put("renew_seconds", Math.round(seconds * 10) / 10.0);
    report.put("renewals_per_s", Math.round(renewed.get() / seconds));
    report.put("not_renewed", notRenewed.get());
  }

  private static double mib(double bytes) {
    return Math.round(bytes / (1024 * 1024) * 10) / 10.0;
  }
}
