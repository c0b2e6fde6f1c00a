package io.leasehold.benchmarks;

import com.google.gson.GsonBuilder;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.leasehold.cli.DurationConverter;
import io.leasehold.client.AcquireAllResult;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireManyResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReleaseRequest;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A proxy's start: one process claims N names at once and is timed from the call until it holds
 * every lease. Leasehold through the SDK's {@code acquireAll} (AcquireMany: 1,000 names an entry),
 * the same through N concurrent {@code tryAcquire} calls (one Acquire each, how it was done before
 * AcquireMany), and etcd, the anchor, through jetcd: one lease, then transactions of at most 128
 * create-if-absent puts under it (etcd's default {@code --max-txn-ops}), sent together. Each round
 * uses fresh names, alternates which system goes first, and ends by releasing everything. After
 * each Leasehold burst the tool waits two TTLs and checks that no lease was lost (every handle
 * still HELD, none ever LOST or JEOPARDY).
 *
 * <pre>
 *   deploy/local-cluster.sh up
 *   java -cp benchmarks/target/benchmarks.jar io.leasehold.benchmarks.BurstAcquire \
 *     --endpoints 127.0.0.1:7400,127.0.0.1:7410,127.0.0.1:7420 --sizes 500,10000 --rounds 5
 * </pre>
 *
 * <p>benchmarks/burst.sh starts both clusters fresh and runs this. Prints one JSON object per
 * measured burst on stdout, progress on stderr.
 */
@Command(
    name = "burst-acquire",
    mixinStandardHelpOptions = true,
    description = "Time from one call to holding N leases: acquireAll, N tryAcquire, etcd txns.")
public final class BurstAcquire implements Callable<Integer> {
  @Option(
      names = "--endpoints",
      split = ",",
      defaultValue = "127.0.0.1:7400",
      paramLabel = "HOST:PORT",
      description = "Leasehold client addresses (default: ${DEFAULT-VALUE}).")
  List<String> endpoints;

  @Option(
      names = "--etcd-endpoints",
      split = ",",
      paramLabel = "HOST:PORT",
      description = "etcd client addresses; without it, etcd is not measured.")
  List<String> etcdEndpoints;

  @Option(
      names = "--sizes",
      split = ",",
      defaultValue = "500,10000",
      paramLabel = "N",
      description = "Names a burst claims (default: ${DEFAULT-VALUE}).")
  List<Integer> sizes;

  @Option(
      names = "--rounds",
      defaultValue = "5",
      description = "Rounds of every burst (default: ${DEFAULT-VALUE}).")
  int rounds;

  @Option(
      names = "--ttl",
      converter = DurationConverter.class,
      defaultValue = "2s",
      description = "TTL of each lease (default: ${DEFAULT-VALUE}, the shortest allowed).")
  Duration ttl;

  @Option(
      names = "--shape",
      defaultValue = "session",
      description =
          "session: every lease lives with the client's session, whose TTL is --ttl (one"
              + " keep-alive for all, as etcd's one lease); ttl: every lease has a TTL of its own,"
              + " renewed in Renew batches (default: ${DEFAULT-VALUE}).")
  String shape;

  @Option(
      names = "--one-by-one-max",
      defaultValue = "500",
      description =
          "Largest burst also measured as N tryAcquire calls (default: ${DEFAULT-VALUE}).")
  int oneByOneMax;

  private int lost;

  public static void main(String[] args) {
    System.exit(new CommandLine(new BurstAcquire()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    try (LeaseholdClient client =
            LeaseholdClient.builder()
                .endpoints(endpoints)
                .holder("burst")
                .sessions(session())
                .sessionTtl(ttl)
                .build();
        Client etcd =
            etcdEndpoints == null
                ? null
                : Client.builder()
                    .endpoints(
                        etcdEndpoints.stream().map(e -> "http://" + e).toArray(String[]::new))
                    .build()) {
      for (int round = 1; round <= rounds; round++) {
        for (int n : sizes) {
          List<String> order = new ArrayList<>(List.of("acquireAll", "raw", "raw-leader"));
          if (n <= oneByOneMax) {
            order.add("tryAcquire");
          }
          if (etcd != null) {
            order.add("etcd");
          }
          if (round % 2 == 0) {
            java.util.Collections.reverse(order);
          }
          for (String way : order) {
            String prefix = "burst/r" + round + "-" + way + "-" + n + "-";
            List<String> names = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
              names.add(prefix + i);
            }
            double ms =
                switch (way) {
                  case "acquireAll" -> acquireAll(client, names);
                  case "tryAcquire" -> oneByOne(client, names);
                  case "raw" -> raw(names, false);
                  case "raw-leader" -> raw(names, true);
                  default -> etcdTxns(etcd, names);
                };
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("round", round);
            row.put("way", way);
            row.put("names", n);
            row.put("ms", Math.round(ms * 10) / 10.0);
            row.put("lost", lost);
            out.println(new GsonBuilder().create().toJson(row));
            System.err.printf("round %d %s %d names: %.1f ms%n", round, way, n, ms);
          }
        }
      }
    }
    return lost == 0 ? 0 : 1;
  }

  private boolean session() {
    if (!shape.equals("session") && !shape.equals("ttl")) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--shape: session or ttl, got " + shape);
    }
    return shape.equals("session");
  }

  /** Each lease's options: the session's TTL, or one of its own. */
  private LeaseOptions options() {
    return session() ? LeaseOptions.defaults() : LeaseOptions.defaults().withTtl(ttl);
  }

  private double acquireAll(LeaseholdClient client, List<String> names) throws Exception {
    long start = System.nanoTime();
    AcquireAllResult r = client.acquireAll(names, options()).get(60, TimeUnit.SECONDS);
    double ms = (System.nanoTime() - start) / 1e6;
    if (!r.allGranted()) {
      // A name refused, or granted too late to hold (its TTL ran out on the client's clock while
      // the burst was answered): lost to the wait, counted, and the rounds go on.
      lost += r.refused().size() + r.failed().size() + r.skipped().size();
      System.err.printf(
          "acquireAll of %d names: %d refused, %d failed (e.g. %s)%n",
          names.size(),
          r.refused().size(),
          r.failed().size(),
          r.failed().values().stream().findFirst().map(Throwable::toString).orElse("-"));
    }
    holdAndRelease(new ArrayList<>(r.granted().values()));
    return ms;
  }

  private double oneByOne(LeaseholdClient client, List<String> names) throws Exception {
    long start = System.nanoTime();
    List<CompletableFuture<AcquireResult>> calls = new ArrayList<>(names.size());
    for (String name : names) {
      calls.add(client.tryAcquire(name, options()));
    }
    List<Lease> leases = new ArrayList<>(names.size());
    for (CompletableFuture<AcquireResult> c : calls) {
      AcquireResult r = c.get(60, TimeUnit.SECONDS);
      if (!(r instanceof Granted g)) {
        throw new IllegalStateException("not granted: " + r);
      }
      leases.add(g.lease());
    }
    double ms = (System.nanoTime() - start) / 1e6;
    holdAndRelease(leases);
    return ms;
  }

  /**
   * Holds the leases for two TTLs (the SDK renews them), counts any not HELD, then releases them.
   */
  private void holdAndRelease(List<Lease> leases) throws Exception {
    long until = System.nanoTime() + 2 * ttl.toNanos();
    while (System.nanoTime() - until < 0) {
      TimeUnit.MILLISECONDS.sleep(100);
    }
    for (Lease lease : leases) {
      if (lease.state() != LeaseState.HELD) {
        lost++;
      }
    }
    List<CompletableFuture<Void>> released = new ArrayList<>(leases.size());
    leases.forEach(l -> released.add(l.release()));
    CompletableFuture.allOf(released.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
  }

  /**
   * The cluster's share: AcquireMany calls of 1,000 names through the generated gRPC stubs, spread
   * over the nodes (or all to the leader) and sent together, timed to the last reply; then released
   * the same way.
   */
  private double raw(List<String> names, boolean leaderOnly) throws Exception {
    List<io.grpc.ManagedChannel> channels = new ArrayList<>();
    for (String e : leaderOnly ? List.of(leaderEndpoint()) : endpoints) {
      channels.add(io.grpc.ManagedChannelBuilder.forTarget(e).usePlaintext().build());
    }
    try {
      long start = System.nanoTime();
      long session = 0;
      if (session()) {
        session =
            LeasesGrpc.newBlockingStub(channels.get(0))
                .withDeadlineAfter(60, TimeUnit.SECONDS)
                .createSession(
                    io.leasehold.proto.v1.CreateSessionRequest.newBuilder()
                        .setHolder("burst-raw")
                        .setTtl(
                            com.google.protobuf.Duration.newBuilder().setSeconds(ttl.toSeconds()))
                        .build())
                .getSession()
                .getId();
      }
      // A client of the raw API keeps its session alive too, while its calls wait.
      java.util.concurrent.ScheduledExecutorService keepAlive =
          java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
      if (session != 0) {
        long id = session;
        keepAlive.scheduleAtFixedRate(
            () ->
                LeasesGrpc.newFutureStub(channels.get(0))
                    .withDeadlineAfter(ttl.toMillis(), TimeUnit.MILLISECONDS)
                    .keepAlive(
                        io.leasehold.proto.v1.KeepAliveRequest.newBuilder()
                            .addSessions(id)
                            .build()),
            ttl.toMillis() / 3,
            ttl.toMillis() / 3,
            TimeUnit.MILLISECONDS);
      }
      List<com.google.common.util.concurrent.ListenableFuture<AcquireManyResponse>> calls =
          new ArrayList<>();
      for (int from = 0, i = 0; from < names.size(); from += 1000, i++) {
        AcquireManyRequest.Builder r = AcquireManyRequest.newBuilder().setHolder("burst-raw");
        if (session != 0) {
          r.setSession(session);
        } else {
          r.setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(ttl.toSeconds()));
        }
        for (String name : names.subList(from, Math.min(names.size(), from + 1000))) {
          r.addItems(AcquireManyItem.newBuilder().setName(name));
        }
        calls.add(
            LeasesGrpc.newFutureStub(channels.get(i % channels.size()))
                .withDeadlineAfter(60, TimeUnit.SECONDS)
                .acquireMany(r.build()));
      }
      List<AcquireManyResponse> replies = new ArrayList<>();
      try {
        for (var c : calls) {
          replies.add(c.get(60, TimeUnit.SECONDS));
        }
      } finally {
        keepAlive.shutdownNow();
      }
      double ms = (System.nanoTime() - start) / 1e6;
      for (AcquireManyResponse reply : replies) {
        for (var x : reply.getResultsList()) {
          if (x.getOutcome() != Outcome.GRANTED) {
            throw new IllegalStateException("raw: not granted: " + x);
          }
        }
      }
      if (session != 0) {
        // Closing the session ends every lease attached to it, in one entry.
        LeasesGrpc.newBlockingStub(channels.get(0))
            .withDeadlineAfter(60, TimeUnit.SECONDS)
            .closeSession(
                io.leasehold.proto.v1.CloseSessionRequest.newBuilder().setSession(session).build());
      } else {
        release(channels, replies);
      }
      return ms;
    } finally {
      channels.forEach(io.grpc.ManagedChannel::shutdownNow);
    }
  }

  /** The API address of the current leader, as the first node that answers names it. */
  private String leaderEndpoint() {
    for (String e : endpoints) {
      io.grpc.ManagedChannel c = io.grpc.ManagedChannelBuilder.forTarget(e).usePlaintext().build();
      try {
        String leader =
            io.leasehold.proto.v1.ClusterGrpc.newBlockingStub(c)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .status(io.leasehold.proto.v1.StatusRequest.getDefaultInstance())
                .getLeaderClientAddress();
        if (!leader.isEmpty()) {
          return leader;
        }
      } catch (io.grpc.StatusRuntimeException unreachable) {
        // the next one
      } finally {
        c.shutdownNow();
      }
    }
    throw new IllegalStateException("no node names a leader");
  }

  /** Releases every lease, a bounded number at a time, as the SDK does, not to flood the leader. */
  private static void release(
      List<io.grpc.ManagedChannel> channels, List<AcquireManyResponse> replies) throws Exception {
    java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(128);
    List<com.google.common.util.concurrent.ListenableFuture<?>> releases = new ArrayList<>();
    int i = 0;
    for (AcquireManyResponse reply : replies) {
      for (var x : reply.getResultsList()) {
        inFlight.acquire();
        var release =
            LeasesGrpc.newFutureStub(channels.get(i++ % channels.size()))
                .withDeadlineAfter(60, TimeUnit.SECONDS)
                .release(
                    ReleaseRequest.newBuilder()
                        .setName(x.getName())
                        .setToken(x.getLease().getToken())
                        .build());
        release.addListener(inFlight::release, Runnable::run);
        releases.add(release);
      }
    }
    for (var r : releases) {
      r.get(60, TimeUnit.SECONDS);
    }
  }

  /** One etcd lease, then create-if-absent transactions of at most 128 keys, sent together. */
  private double etcdTxns(Client etcd, List<String> names) throws Exception {
    long start = System.nanoTime();
    long lease = etcd.getLeaseClient().grant(ttl.toSeconds()).get(60, TimeUnit.SECONDS).getID();
    KV kv = etcd.getKVClient();
    PutOption withLease = PutOption.builder().withLeaseId(lease).build();
    List<CompletableFuture<TxnResponse>> txns = new ArrayList<>();
    for (int from = 0; from < names.size(); from += 128) {
      List<String> chunk = names.subList(from, Math.min(names.size(), from + 128));
      List<Cmp> absent = new ArrayList<>();
      List<Op> puts = new ArrayList<>();
      for (String name : chunk) {
        ByteSequence key = ByteSequence.from(name, StandardCharsets.UTF_8);
        absent.add(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)));
        puts.add(Op.put(key, ByteSequence.from("burst", StandardCharsets.UTF_8), withLease));
      }
      txns.add(
          kv.txn()
              .If(absent.toArray(Cmp[]::new))
              .Then(puts.toArray(Op[]::new))
              .commit()
              .toCompletableFuture());
    }
    for (CompletableFuture<TxnResponse> t : txns) {
      if (!t.get(60, TimeUnit.SECONDS).isSucceeded()) {
        throw new IllegalStateException("an etcd transaction found a key present");
      }
    }
    double ms = (System.nanoTime() - start) / 1e6;
    etcd.getLeaseClient().revoke(lease).get(60, TimeUnit.SECONDS);
    return ms;
  }
}
