package io.leasehold.benchmarks;

import com.google.gson.GsonBuilder;
import io.leasehold.cli.DurationConverter;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseholdClient;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What many SDK clients in one process cost: N clients each acquire M leases through the SDK's
 * ordinary {@code acquire}, then the tool reports the live heap after a full collection, the live
 * threads, and the heap per lease; then it closes half the clients at once while the other half
 * keep their leases alive, and checks that none of theirs lapsed (no JEOPARDY or LOST transition,
 * and the cluster still holds every one with its token).
 *
 * <pre>
 *   mvn -B -q -pl benchmarks -am package -DskipTests
 *   java -Xmx4g -cp benchmarks/target/benchmarks.jar io.leasehold.benchmarks.ManyClients \
 *     --endpoints 127.0.0.1:7400 --clients 1000 --leases 100 --ttl 60s
 * </pre>
 *
 * <p>Prints one JSON object on stdout, progress on stderr; exits 1 if a survivor's lease lapsed. It
 * counts memory and threads, not time: one run is enough.
 */
@Command(
    name = "many-clients",
    mixinStandardHelpOptions = true,
    description =
        "N SDK clients in this JVM, M leases each: heap per lease, threads, and whether closing half of them "
            + "lets the other half's leases lapse.")
public final class ManyClients implements Callable<Integer> {
  @Option(
      names = "--endpoints",
      split = ",",
      defaultValue = "127.0.0.1:7400",
      paramLabel = "HOST:PORT",
      description = "Client addresses of the cluster's nodes (default: ${DEFAULT-VALUE}).")
  List<String> endpoints;

  @Option(
      names = "--clients",
      defaultValue = "100",
      paramLabel = "N",
      description = "SDK clients (default: ${DEFAULT-VALUE}).")
  int clients;

  @Option(
      names = "--leases",
      defaultValue = "100",
      paramLabel = "M",
      description = "Leases per client (default: ${DEFAULT-VALUE}).")
  int leases;

  @Option(
      names = "--ttl",
      converter = DurationConverter.class,
      defaultValue = "60s",
      paramLabel = "DURATION",
      description =
          "TTL of each lease, or of each client's session with --sessions (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(
      names = "--sessions",
      description =
          "Attach each client's leases to its session instead of giving each a TTL of its own.")
  boolean sessions;

  @Option(
      names = "--in-flight",
      defaultValue = "256",
      paramLabel = "N",
      description = "Acquisitions in flight, over all clients (default: ${DEFAULT-VALUE}).")
  int inFlight;

  @Option(
      names = "--closers",
      defaultValue = "16",
      paramLabel = "N",
      description =
          "Threads closing the first half of the clients at once (default: ${DEFAULT-VALUE}).")
  int closers;

  @Option(
      names = "--watch",
      converter = DurationConverter.class,
      defaultValue = "5s",
      paramLabel = "DURATION",
      description =
          "How long to keep watching the survivors' leases after the closes (default: ${DEFAULT-VALUE}).")
  Duration watch;

  @Option(
      names = "--prefix",
      defaultValue = "many/",
      paramLabel = "PREFIX",
      description =
          "Lease names start with PREFIX (default: ${DEFAULT-VALUE}); a run adds an id of its own.")
  String prefix;

  @Option(
      names = "--histogram",
      defaultValue = "0",
      paramLabel = "N",
      description =
          "Also report the N classes whose live heap grew the most per lease (default: none).")
  int histogram;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(new CommandLine(new ManyClients()).execute(args));
  }

  /** One run's figures; {@link #lapsed()} is what must be zero. */
  record Result(
      int clients,
      int leasesPerClient,
      long leases,
      double ttlSeconds,
      boolean sessions,
      double acquireSeconds,
      long heapBeforeBytes,
      long heapWithLeasesBytes,
      long heapPerLeaseBytes,
      long heapPerClientBytes,
      int threadsBefore,
      int threadsWithClients,
      int peakThreads,
      Map<String, Integer> threadGroups,
      List<Histogram.Growth> perLeaseByClass,
      long notValidBeforeClose,
      int closedClients,
      double closeSeconds,
      long survivorLeases,
      long survivorJeopardy,
      long survivorLost,
      long survivorNotHeldByCluster,
      int threadsAfterClose) {
    long lapsed() {
      return survivorLost + survivorNotHeldByCluster;
    }
  }

  @Override
  public Integer call() throws Exception {
    for (Map.Entry<String, Integer> o :
        Map.of(
                "--clients",
                clients,
                "--leases",
                leases,
                "--in-flight",
                inFlight,
                "--closers",
                closers)
            .entrySet()) {
      if (o.getValue() < 1) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), o.getKey() + ": must be at least 1, got " + o.getValue());
      }
    }
    PrintWriter err = spec.commandLine().getErr();
    Result r = run(err);
    PrintWriter out = spec.commandLine().getOut();
    out.println(
        new GsonBuilder()
            .setFieldNamingPolicy(com.google.gson.FieldNamingPolicy.LOWER_CASE_WITH_UNDERSCORES)
            .serializeSpecialFloatingPointValues()
            .create()
            .toJson(r));
    out.flush();
    if (r.lapsed() > 0) {
      err.printf(
          Locale.ROOT,
          "%d of the survivors' %d leases lapsed while the others closed%n",
          r.lapsed(),
          r.survivorLeases());
      err.flush();
      return 1;
    }
    return 0;
  }

  Result run(PrintWriter log) throws Exception {
    String run = prefix + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 24) + "/";
    LeaseOptions options =
        sessions ? LeaseOptions.defaults() : LeaseOptions.defaults().withTtl(ttl);
    long heapBefore = usedHeapAfterGc();
    int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
    ManagementFactory.getThreadMXBean().resetPeakThreadCount();
    Map<String, Histogram.Row> before = histogram > 0 ? Histogram.take() : Map.of();

    List<LeaseholdClient> sdk = new ArrayList<>();
    Lease[][] held = new Lease[clients][leases];
    long started = System.nanoTime();
    try {
      for (int c = 0; c < clients; c++) {
        sdk.add(
            LeaseholdClient.builder()
                .endpoints(endpoints)
                .holder(run + "client-" + c)
                .sessionTtl(ttl)
                .build());
      }
      // Only the leases are kept (as an application keeps its handles), not the futures: the heap
      // measured is the SDK's.
      Semaphore window = new Semaphore(inFlight);
      long total = (long) clients * leases;
      AtomicLong done = new AtomicLong();
      CompletableFuture<Void> acquired = new CompletableFuture<>();
      // Round-robin over the clients, so that they all fill up together, as a fleet would.
      for (int m = 0; m < leases && !acquired.isDone(); m++) {
        for (int c = 0; c < clients; c++) {
          window.acquire();
          int client = c;
          int lease = m;
          sdk.get(c)
              .acquire(run + c + "/" + m, options)
              .whenComplete(
                  (l, e) -> {
                    window.release();
                    if (e != null) {
                      acquired.completeExceptionally(e);
                    } else {
                      held[client][lease] = l;
                      if (done.incrementAndGet() == total) {
                        acquired.complete(null);
                      }
                    }
                  });
        }
        if ((m + 1) % Math.max(1, leases / 10) == 0) {
          log.printf(Locale.ROOT, "%,d of %,d leases acquired%n", (long) (m + 1) * clients, total);
          log.flush();
        }
      }
      acquired.get(10, TimeUnit.MINUTES);
      double acquireSeconds = (System.nanoTime() - started) / 1e9;

      long heapWith = usedHeapAfterGc();
      int threadsWith = ManagementFactory.getThreadMXBean().getThreadCount();
      int peak = ManagementFactory.getThreadMXBean().getPeakThreadCount();
      Map<String, Integer> groups = threadGroups();
      List<Histogram.Growth> byClass =
          histogram > 0
              ? Histogram.growth(before, Histogram.take(), total).stream().limit(histogram).toList()
              : List.of();
      log.printf(
          Locale.ROOT,
          "%,d clients, %,d leases: %,d bytes of heap per lease, %,d threads%n",
          clients,
          total,
          (heapWith - heapBefore) / total,
          threadsWith);
      log.flush();

      // Leases that lapsed while the others went in (a cluster too slow to renew them all, say).
      long notValid = 0;
      for (Lease[] ls : held) {
        for (Lease l : ls) {
          notValid += l.isValid() ? 0 : 1;
        }
      }
      // The first half closes at once; the second half's leases must not notice.
      int closing = clients / 2;
      AtomicLong jeopardy = new AtomicLong();
      AtomicLong lost = new AtomicLong();
      long survivors = 0;
      for (int c = closing; c < clients; c++) {
        for (Lease l : held[c]) {
          survivors++;
          l.addListener(
              t -> {
                if (t.to() == LeaseState.JEOPARDY) {
                  jeopardy.incrementAndGet();
                } else if (t.to() == LeaseState.LOST) {
                  lost.incrementAndGet();
                }
              });
        }
      }
      ExecutorService closers = Executors.newFixedThreadPool(this.closers);
      long closeStart = System.nanoTime();
      try {
        List<CompletableFuture<Void>> closes = new ArrayList<>();
        for (LeaseholdClient c : sdk.subList(0, closing)) {
          closes.add(CompletableFuture.runAsync(c::close, closers));
        }
        CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
      } finally {
        closers.shutdownNow();
      }
      double closeSeconds = (System.nanoTime() - closeStart) / 1e9;
      log.printf(
          Locale.ROOT,
          "closed %,d clients in %.1f s; watching the other %,d for %s%n",
          closing,
          closeSeconds,
          clients - closing,
          watch);
      log.flush();
      long watchEnd = System.nanoTime() + watch.toNanos();
      while (System.nanoTime() - watchEnd < 0 && lost.get() == 0) {
        Thread.sleep(Math.min(200, Math.max(1, (watchEnd - System.nanoTime()) / 1_000_000)));
      }
      long notHeld = notHeldByCluster(sdk.subList(closing, clients), held, closing, run);
      int threadsAfter = ManagementFactory.getThreadMXBean().getThreadCount();
      return new Result(
          clients,
          leases,
          total,
          ttl.toMillis() / 1e3,
          sessions,
          acquireSeconds,
          heapBefore,
          heapWith,
          (heapWith - heapBefore) / total,
          (heapWith - heapBefore) / clients,
          threadsBefore,
          threadsWith,
          peak,
          groups,
          byClass,
          notValid,
          closing,
          closeSeconds,
          survivors,
          jeopardy.get(),
          lost.get(),
          notHeld,
          threadsAfter);
    } finally {
      ExecutorService closers = Executors.newFixedThreadPool(this.closers);
      try {
        CompletableFuture.allOf(
                sdk.stream()
                    .map(c -> CompletableFuture.runAsync(c::close, closers))
                    .toArray(CompletableFuture[]::new))
            .get(10, TimeUnit.MINUTES);
      } finally {
        closers.shutdownNow();
      }
    }
  }

  /**
   * How many of the survivors' leases the cluster does not hold with the token their client has.
   */
  private static long notHeldByCluster(
      List<LeaseholdClient> survivors, Lease[][] held, int first, String run) throws Exception {
    long missing = 0;
    for (int i = 0; i < survivors.size(); i++) {
      LeaseholdClient c = survivors.get(i);
      Set<String> stored = new HashSet<>();
      for (LeaseInfo l : c.listHeldBy(c.holder(), run).get(1, TimeUnit.MINUTES).leases()) {
        stored.add(l.name() + "#" + l.token());
      }
      for (Lease l : held[first + i]) {
        if (!l.isValid() || !stored.contains(l.name() + "#" + l.token())) {
          missing++;
        }
      }
    }
    return missing;
  }

  /** The live heap after full collections, once two in a row agree within 1%. */
  static long usedHeapAfterGc() throws InterruptedException {
    long last = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
      if (Math.abs(last - used) <= used / 100) {
        return used;
      }
      last = used;
      Thread.sleep(100);
    }
    return last;
  }

  /**
   * Live threads by name, with the numbers in it taken out ({@code grpc-default-executor-#}), the
   * largest groups first.
   */
  static Map<String, Integer> threadGroups() {
    Map<String, Integer> counts = new TreeMap<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      counts.merge(t.getName().replaceAll("\\d+", "#"), 1, Integer::sum);
    }
    Map<String, Integer> sorted = new LinkedHashMap<>();
    counts.entrySet().stream()
        .sorted((a, b) -> b.getValue() - a.getValue())
        .limit(20)
        .forEach(e -> sorted.put(e.getKey(), e.getValue()));
    return sorted;
  }
}
