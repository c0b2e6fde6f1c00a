package io.leasehold.benchmarks.compare;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.leasehold.cli.ClientCommand;
import io.leasehold.cli.DurationConverter;
import io.leasehold.cli.Json;
import io.leasehold.cli.bench.AcquireRelease;
import io.leasehold.cli.bench.BenchReport;
import io.leasehold.cli.bench.NodeStats;
import io.leasehold.cli.bench.Progress;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.ReleaseResponse;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code acquire-release} against Leasehold the way a service in another language calls it: the
 * stubs generated from {@code leases.proto} on plain gRPC channels, one channel per node, no SDK.
 * Each worker acquires its own name with a holder of its own, then releases it with the fencing
 * token it got back. Calls go where the mode says: spread over every node (worker {@code i} on node
 * {@code i mod n}; a follower forwards the write to the leader), all on one node, or all on the
 * leader (found with the Cluster service's Status). A failed call (UNAVAILABLE, RESOURCE_EXHAUSTED,
 * DEADLINE_EXCEEDED…) is counted by its status code and the worker backs off before going on. The
 * same load loop, recorders and report as {@code leasehold bench} and {@link EtcdBench}: one JSON
 * object a run (system {@code leasehold-raw}), for {@code benchmarks/compare.sh} and {@link
 * CompareTable}.
 *
 * <pre>
 *   java -cp benchmarks/target/benchmarks.jar io.leasehold.benchmarks.compare.RawBench \
 *     --endpoints 127.0.0.1:7600,127.0.0.1:7610,127.0.0.1:7620 acquire-release --clients 16 --spread
 * </pre>
 */
@Command(
    name = "raw-bench",
    mixinStandardHelpOptions = true,
    subcommands = {RawBench.AcquireReleaseRun.class, FillRun.class},
    description = "Leasehold through its generated gRPC stubs, no SDK.")
public final class RawBench implements Runnable {
  /** The system's name in the report, beside {@code leasehold} (the SDK) and etcd's shapes. */
  public static final String SYSTEM = "leasehold-raw";

  @Option(
      names = "--endpoints",
      split = ",",
      defaultValue = "127.0.0.1:7400",
      paramLabel = "HOST:PORT",
      description = "Every node's client address (default: ${DEFAULT-VALUE}).")
  List<String> endpoints;

  @Option(
      names = {"-o", "--output"},
      defaultValue = "json",
      paramLabel = "json|table",
      description = "json (default) or table.")
  String output;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(new CommandLine(new RawBench()).execute(args));
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a workload is required (acquire-release or fill)");
  }

  /** {@code --endpoints}, trimmed; {@code usage} makes the error naming the option and the rule. */
  List<String> endpoints(Function<String, CommandLine.ParameterException> usage) {
    List<String> checked = new ArrayList<>();
    for (String e : endpoints) {
      if (!ClientCommand.isHostPort(e)) {
        throw usage.apply("--endpoints: '" + e + "' is not host:port");
      }
      checked.add(e.trim());
    }
    if (checked.isEmpty()) {
      throw usage.apply("--endpoints: at least one host:port is required");
    }
    return checked;
  }

  /** Where the workers' calls go. */
  enum Mode {
    SPREAD("spread"),
    NODE("node"),
    LEADER("leader");

    final String label;

    Mode(String label) {
      this.label = label;
    }
  }

  @Command(
      name = "acquire-release",
      mixinStandardHelpOptions = true,
      description =
          "Each worker: Acquire its own name, then Release it with the returned token; a cycle is both.")
  static final class AcquireReleaseRun implements Callable<Integer> {
    @CommandLine.ParentCommand RawBench root;
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--clients",
        defaultValue = "16",
        paramLabel = "N",
        description = "Concurrent workers (default: ${DEFAULT-VALUE}).")
    int clients;

    @Option(
        names = "--spread",
        description = "Worker i calls node i mod n, over every endpoint (the default).")
    boolean spread;

    @Option(
        names = "--node",
        paramLabel = "HOST:PORT",
        description = "Every worker calls this one node.")
    String node;

    @Option(
        names = "--leader-only",
        description =
            "Every worker calls the node that leads (asked of each endpoint with Cluster.Status).")
    boolean leaderOnly;

    @Option(
        names = "--duration",
        converter = DurationConverter.class,
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
        names = "--windows",
        converter = DurationConverter.class,
        paramLabel = "DURATION",
        description = "Also report the measured period window by window, this long each (e.g. 5s).")
    Duration window;

    @Option(
        names = "--ttl",
        converter = DurationConverter.class,
        defaultValue = "30s",
        paramLabel = "DURATION",
        description = "TTL of each lease (default: ${DEFAULT-VALUE}).")
    Duration ttl;

    @Option(
        names = "--deadline",
        converter = DurationConverter.class,
        defaultValue = "10s",
        paramLabel = "DURATION",
        description = "Deadline of each call (default: ${DEFAULT-VALUE}).")
    Duration deadline;

    @Option(
        names = "--backoff",
        converter = DurationConverter.class,
        defaultValue = "100ms",
        paramLabel = "DURATION",
        description = "How long a worker waits after a failed call (default: ${DEFAULT-VALUE}).")
    Duration backoff;

    @Option(
        names = "--names",
        defaultValue = "worker",
        paramLabel = "worker|fresh",
        description =
            "worker: each worker acquires its own name again and again (default); fresh: a new name each cycle, "
                + "as leasehold bench does.")
    String names;

    @Option(
        names = "--prefix",
        defaultValue = "bench/",
        paramLabel = "PREFIX",
        description =
            "Names start with PREFIX (default: ${DEFAULT-VALUE}); its namespace's policy applies.")
    String prefix;

    @Option(
        names = "--metrics",
        split = ",",
        paramLabel = "HOST:PORT",
        description =
            "Each node's metrics endpoint, for its CPU and memory (default: each endpoint's port + 2; 'off': none).")
    List<String> metrics = new ArrayList<>();

    @Option(
        names = "--phase",
        paramLabel = "LABEL",
        description = "A label for the run in the report (compare.sh: cold).")
    String phase;

    /** What the options asked for, once checked. */
    record Plan(Mode mode, List<String> endpoints, List<String> metrics) {}

    private CommandLine.ParameterException usage(String message) {
      return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    /** Checks every option; the message of what it throws names the option and the rule. */
    Plan plan() {
      List<String> endpoints = root.endpoints(this::usage);
      if (!root.output.equals("json") && !root.output.equals("table")) {
        throw usage("--output: json or table, got '" + root.output + "'");
      }
      int modes = (spread ? 1 : 0) + (node != null ? 1 : 0) + (leaderOnly ? 1 : 0);
      if (modes > 1) {
        throw usage("--spread, --node and --leader-only: give at most one");
      }
      if (node != null && !ClientCommand.isHostPort(node)) {
        throw usage("--node: '" + node + "' is not host:port");
      }
      if (clients < 1) {
        throw usage("--clients: must be at least 1, got " + clients);
      }
      if (duration.isZero()) {
        throw usage("--duration: must be positive");
      }
      if (window != null && window.isZero()) {
        throw usage("--windows: must be positive");
      }
      if (window != null && window.compareTo(duration) > 0) {
        throw usage(
            "--windows: must be no longer than --duration ("
                + DurationConverter.format(duration)
                + "), got "
                + DurationConverter.format(window));
      }
      if (ttl.isZero()) {
        throw usage("--ttl: must be positive");
      }
      if (deadline.isZero()) {
        throw usage("--deadline: must be positive");
      }
      if (!names.equals("worker") && !names.equals("fresh")) {
        throw usage("--names: worker or fresh, got '" + names + "'");
      }
      List<String> metricsAt;
      if (metrics.size() == 1 && metrics.get(0).equalsIgnoreCase("off")) {
        metricsAt = List.of();
      } else {
        for (String m : metrics) {
          if (!ClientCommand.isHostPort(m)) {
            throw usage("--metrics: '" + m + "' is not host:port (or 'off')");
          }
        }
        metricsAt =
            metrics.isEmpty()
                ? NodeStats.defaultMetricsAddresses(endpoints)
                : metrics.stream().map(String::trim).toList();
      }
      Mode mode = node != null ? Mode.NODE : leaderOnly ? Mode.LEADER : Mode.SPREAD;
      return new Plan(mode, endpoints, metricsAt);
    }

    @Override
    public Integer call() throws Exception {
      Plan plan = plan();
      List<String> targets =
          switch (plan.mode()) {
            case SPREAD -> plan.endpoints();
            case NODE -> List.of(node.trim());
            case LEADER -> List.of(leader(plan.endpoints(), Duration.ofSeconds(30)));
          };
      List<ManagedChannel> channels = new ArrayList<>();
      ExecutorService trampoline =
          Executors.newSingleThreadExecutor(
              r -> {
                Thread t = new Thread(r, "bench-trampoline");
                t.setDaemon(true);
                return t;
              });
      try {
        for (String t : targets) {
          channels.add(channel(t));
        }
        TalliedTarget<Held> target =
            new TalliedTarget<>(target(channels), window == null ? Duration.ZERO : window, backoff);
        AcquireRelease.Settings s =
            new AcquireRelease.Settings(clients, warmup, duration, OptionalDouble.empty(), prefix);
        target.start(duration);
        BenchReport report =
            AcquireRelease.run(
                SYSTEM, target, s, new NodeStats(plan.metrics()), trampoline, Progress.off());
        report
            .setting("mode", plan.mode().label)
            .setting("nodes", targets)
            .setting("api", "generated gRPC stubs, a channel per node")
            .setting("names", names.equals("worker") ? "one per worker" : "fresh each cycle")
            .setting("ttl_s", ttl.toSeconds())
            .setting("deadline_ms", deadline.toMillis())
            .setting("backoff_ms", backoff.toMillis());
        if (phase != null) {
          report.setting("phase", phase);
        }
        target.addTo(report);
        PrintWriter out = spec.commandLine().getOut();
        if (root.output.equals("table")) {
          report.printTable(out);
        } else {
          out.println(Json.compact(report.json()));
        }
        out.flush();
        return report.result("cycles_per_s") instanceof Number n && n.doubleValue() > 0 ? 0 : 1;
      } finally {
        trampoline.shutdownNow();
        for (ManagedChannel c : channels) {
          c.shutdownNow();
        }
        for (ManagedChannel c : channels) {
          c.awaitTermination(5, TimeUnit.SECONDS);
        }
      }
    }

    /** A lease this worker holds: the name and the fencing token Acquire returned. */
    record Held(String name, long token) {}

    /** Acquire then Release on worker {@code w}'s channel ({@code w mod channels}). */
    AcquireRelease.Target<Held> target(List<ManagedChannel> channels) {
      List<LeasesGrpc.LeasesStub> stubs = channels.stream().map(LeasesGrpc::newStub).toList();
      String run = Long.toString(System.currentTimeMillis(), 36);
      com.google.protobuf.Duration ttlProto =
          com.google.protobuf.Duration.newBuilder()
              .setSeconds(ttl.getSeconds())
              .setNanos(ttl.getNano())
              .build();
      boolean own = names.equals("worker");
      return new AcquireRelease.Target<>() {
        @Override
        public CompletableFuture<Held> acquire(int worker, String freshName) {
          String name = own ? prefix + "raw-" + run + "-" + worker : freshName;
          AcquireRequest request =
              AcquireRequest.newBuilder()
                  .setName(name)
                  .setHolder("raw-" + run + "-" + worker)
                  .setTtl(ttlProto)
                  .build();
          return RawBench.<AcquireResponse>call(o -> stub(stubs, worker).acquire(request, o))
              .thenApply(
                  r -> {
                    if (r.getOutcome() != Outcome.GRANTED) {
                      String why =
                          r.getOutcome() == Outcome.REJECTED
                              ? "REJECTED " + r.getRejection().getReason()
                              : r.getOutcome().name();
                      throw new TalliedTarget.Refused(why, "acquire " + name + ": " + why);
                    }
                    return new Held(name, r.getLease().getToken());
                  });
        }

        @Override
        public CompletableFuture<Void> release(int worker, Held held) {
          ReleaseRequest request =
              ReleaseRequest.newBuilder().setName(held.name()).setToken(held.token()).build();
          return RawBench.<ReleaseResponse>call(o -> stub(stubs, worker).release(request, o))
              .thenAccept(
                  r -> {
                    if (r.getOutcome() != Outcome.RELEASED) {
                      throw new TalliedTarget.Refused(
                          r.getOutcome().name(), "release " + held.name() + ": " + r.getOutcome());
                    }
                  });
        }
      };
    }

    private LeasesGrpc.LeasesStub stub(List<LeasesGrpc.LeasesStub> stubs, int worker) {
      return stubs
          .get(worker % stubs.size())
          .withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS);
    }

    String leader(List<String> endpoints, Duration timeout) throws InterruptedException {
      return findLeader(endpoints, timeout)
          .orElseThrow(
              () ->
                  usage(
                      "--leader-only: no node among "
                          + endpoints
                          + " said it leads within "
                          + DurationConverter.format(timeout)));
    }
  }

  /**
   * The endpoint whose node says it leads; asked of every endpoint until one does or {@code
   * timeout} passes.
   */
  static Optional<String> findLeader(List<String> endpoints, Duration timeout)
      throws InterruptedException {
    long until = System.nanoTime() + timeout.toNanos();
    List<ManagedChannel> probes = endpoints.stream().map(RawBench::channel).toList();
    try {
      while (true) {
        String reported = null;
        for (int i = 0; i < endpoints.size(); i++) {
          try {
            StatusResponse s =
                ClusterGrpc.newBlockingStub(probes.get(i))
                    .withDeadlineAfter(2, TimeUnit.SECONDS)
                    .status(StatusRequest.getDefaultInstance());
            if (s.getRole() == Role.LEADER) {
              return Optional.of(endpoints.get(i));
            }
            if (!s.getLeaderClientAddress().isEmpty()) {
              reported = s.getLeaderClientAddress();
            }
          } catch (RuntimeException unreachable) {
            // Down or starting: ask the others.
          }
        }
        if (reported != null && endpoints.contains(reported)) {
          return Optional.of(reported);
        }
        if (System.nanoTime() - until > 0) {
          return Optional.empty();
        }
        Thread.sleep(200);
      }
    } finally {
      probes.forEach(ManagedChannel::shutdownNow);
    }
  }

  /** A plaintext channel as any gRPC user makes one. */
  static ManagedChannel channel(String address) {
    return ManagedChannelBuilder.forTarget(address).usePlaintext().build();
  }

  /** A unary call on an async stub as a future. */
  static <T> CompletableFuture<T> call(Consumer<StreamObserver<T>> start) {
    CompletableFuture<T> f = new CompletableFuture<>();
    start.accept(
        new StreamObserver<>() {
          @Override
          public void onNext(T value) {
            f.complete(value);
          }

          @Override
          public void onError(Throwable t) {
            f.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {
            if (!f.isDone()) {
              f.completeExceptionally(new IllegalStateException("the call ended without a reply"));
            }
          }
        });
    return f;
  }
}
