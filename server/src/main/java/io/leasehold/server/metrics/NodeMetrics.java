package io.leasehold.server.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.leasehold.proto.v1.RejectReason;
import io.leasehold.statemachine.core.Counters;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.exporter.httpserver.MetricsHandler;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * A node's Prometheus metrics, in a registry of its own (several nodes may share a JVM in tests),
 * served over HTTP: {@code /metrics} in the Prometheus text format and {@code /healthz} (200 when
 * the node is SERVING by its gRPC health, else 503) for probes that cannot speak gRPC.
 *
 * <p>Lease counters are read from the apply loop's {@link Counters} at scrape time, so counting
 * costs the apply path nothing more; only the apply latency is observed as it happens.
 */
public final class NodeMetrics implements AutoCloseable {
  /** What the metrics read from the node; every supplier may be called from the scrape thread. */
  public interface Source {
    Counters.Snapshot counters();

    long liveLeases();

    int watchers();

    /** Acquire calls queued on this node, waiting for a held name. */
    int acquireWaiting();

    /**
     * Watch messages with events sent, and how many of them another watcher of the same group
     * built.
     */
    long watchMessages();

    long watchSharedMessages();

    int watchGroups();

    RaftView raft();

    /** Replication's costs on this node since it started. */
    Replication replication();

    boolean serving();

    /** Live leases by namespace (what precedes a name's first '/'); may be a few seconds old. */
    Map<String, Long> leasesByNamespace();

    /** Events the furthest-behind watcher of this node has yet to read (0 with none). */
    long watchLagEvents();

    /**
     * Whether Ratis closed this node's Raft division while the node runs (it then serves nothing
     * until restarted).
     */
    boolean divisionClosed();

    /**
     * The file system of the data directory: free and total bytes, or null when it cannot be read.
     */
    Disk dataDisk();

    /**
     * The state store's memory outside the Java heap, in bytes by kind (RocksDB: memtables, table
     * readers, block cache).
     */
    Map<String, Long> storeMemoryBytes();

    /** Every Raft group this node hosts, the meta group (0) first. */
    List<GroupView> groups();
  }

  /** One Raft group this node hosts: its number (0: the meta group) and this node's view of it. */
  public record GroupView(
      int number, boolean leader, long term, long commitIndex, long appliedIndex) {}

  /**
   * Space on the file system holding the data directory, in bytes ({@code usable}: what this
   * process may still write).
   */
  public record Disk(long usable, long total) {}

  /** Raft's state as this node sees it. */
  public record RaftView(
      String role,
      long term,
      long commitIndex,
      long appliedIndex,
      long snapshotIndex,
      int members,
      boolean leaderKnown) {}

  /**
   * AppendEntries requests (heartbeats included) this node received from a leader and their bytes
   * as serialized; flushes of its Raft log to disk (-1: unknown).
   */
  public record Replication(long appendRequests, long appendBytes, long logFlushes) {}

  static final String[] ROLES = {"leader", "follower", "candidate", "listener", "unknown"};

  /**
   * The JVM's metrics, registered once per JVM: the client library keeps every registry it
   * registered them with forever, which would keep every node of an in-JVM test cluster alive.
   */
  private static final PrometheusRegistry JVM = jvmRegistry();

  static {
    // The JDK's HTTP server writes a reply's headers and body apart: with Nagle's algorithm on,
    // the body waits for the client's delayed ACK, some 40 ms a request. Read once per JVM.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
  }

  private static PrometheusRegistry jvmRegistry() {
    PrometheusRegistry r = new PrometheusRegistry();
    JvmMetrics.builder().register(r);
    return r;
  }

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final Histogram applySeconds;
  private final Histogram writeSeconds;
  private final Counter leaderChanges;
  private final Counter snapshots;
  private HttpServer http;
  private ExecutorService httpThreads;

  public NodeMetrics(Source source) {
    counter(
        "leasehold_leases_acquired",
        "Leases granted (new leases, not idempotent re-acquires).",
        () -> source.counters().acquired());
    counter(
        "leasehold_leases_renewed", "Lease renewals applied.", () -> source.counters().renewed());
    counter(
        "leasehold_leases_released",
        "Leases released by their holder.",
        () -> source.counters().released());
    counter(
        "leasehold_leases_expired",
        "Leases that expired (the leader's Expire applied).",
        () -> source.counters().expired());
    counter(
        "leasehold_leases_revoked",
        "Leases ended by an operator's Revoke.",
        () -> source.counters().revoked());
    counter(
        "leasehold_leases_banned",
        "Leases ended because their holder was banned.",
        () -> source.counters().banned());
    counter(
        "leasehold_late_heartbeats",
        "Renewals of a lease that had already expired.",
        () -> source.counters().lateHeartbeats());
    CounterWithCallback.builder()
        .name("leasehold_lease_rejections")
        .help("Acquisitions and renewals refused by policy, by reason.")
        .labelNames("reason")
        .callback(
            cb -> {
              Counters.Snapshot c = source.counters();
              for (RejectReason r : RejectReason.values()) {
                if (r != RejectReason.UNRECOGNIZED && r != RejectReason.REJECT_REASON_UNSPECIFIED) {
                  cb.call(c.rejected(r), r.name());
                }
              }
            })
        .register(registry);
    gauge(
        "leasehold_leases_live",
        "Live leases in this node's applied state.",
        () -> source.liveLeases());
    gauge("leasehold_watchers", "Open Watch streams on this node.", () -> source.watchers());
    gauge(
        "leasehold_acquire_waiting",
        "Acquire calls queued on this node, waiting for a held name.",
        () -> source.acquireWaiting());
    gauge(
        "leasehold_watch_groups",
        "Groups of this node's watchers with the same filter and view (they share messages).",
        () -> source.watchGroups());
    counter(
        "leasehold_watch_messages",
        "Watch messages with events sent by this node.",
        () -> source.watchMessages());
    counter(
        "leasehold_watch_shared_messages",
        "Of those, messages built once and sent to several watchers of a group.",
        () -> source.watchSharedMessages());
    gauge(
        "leasehold_health_serving",
        "1 when the gRPC health service reports SERVING, else 0.",
        () -> source.serving() ? 1 : 0);
    GaugeWithCallback.builder()
        .name("leasehold_raft_role")
        .help("1 for this node's current Raft role, 0 for the others.")
        .labelNames("role")
        .callback(
            cb -> {
              String role = source.raft().role();
              for (String r : ROLES) {
                cb.call(r.equals(role) ? 1 : 0, r);
              }
            })
        .register(registry);
    gauge(
        "leasehold_raft_leader_known",
        "1 when this node knows a leader, else 0.",
        () -> source.raft().leaderKnown() ? 1 : 0);
    gauge("leasehold_raft_term", "The current Raft term.", () -> source.raft().term());
    gauge(
        "leasehold_raft_commit_index",
        "The highest log index known to be committed.",
        () -> source.raft().commitIndex());
    gauge(
        "leasehold_raft_applied_index",
        "The highest log index applied to this node's state.",
        () -> source.raft().appliedIndex());
    gauge(
        "leasehold_raft_snapshot_index",
        "The log index of this node's latest snapshot (0: none).",
        () -> source.raft().snapshotIndex());
    gauge(
        "leasehold_raft_members",
        "Members of the Raft configuration this node knows.",
        () -> source.raft().members());
    counter(
        "leasehold_raft_append_requests_received",
        "AppendEntries requests (heartbeats included) this node received from a leader.",
        () -> source.replication().appendRequests());
    counter(
        "leasehold_raft_append_received_bytes",
        "Bytes of those requests as serialized; summed over the followers, what the leader sent.",
        () -> source.replication().appendBytes());
    CounterWithCallback.builder()
        .name("leasehold_raft_log_flushes")
        .help(
            "Times Ratis's log worker flushed this node's Raft log to disk (each forces the file).")
        .callback(
            cb -> {
              long n = source.replication().logFlushes();
              if (n >= 0) {
                cb.call(n);
              }
            })
        .register(registry);
    leaderChanges =
        Counter.builder()
            .name("leasehold_raft_leader_changes")
            .help("Leader changes this node has seen.")
            .register(registry);
    snapshots =
        Counter.builder()
            .name("leasehold_snapshots_taken")
            .help("Snapshots this node has written.")
            .register(registry);
    applySeconds =
        Histogram.builder()
            .name("leasehold_apply_seconds")
            .help(
                "Time to apply one log entry to the state (one entry may carry a batch of renewals).")
            .unit(Unit.SECONDS)
            .classicOnly()
            .classicUpperBounds(
                0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                0.25, 1)
            .register(registry);
    writeSeconds =
        Histogram.builder()
            .name("leasehold_write_seconds")
            .help(
                "Time from a write arriving at this node to its applied reply (forwarding, replication, commit and apply).")
            .unit(Unit.SECONDS)
            .classicOnly()
            .classicUpperBounds(
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
            .register(registry);
    GaugeWithCallback.builder()
        .name("leasehold_leases_live_by_namespace")
        .help(
            "Live leases in this node's applied state by namespace (the name up to its first '/'), from the lease index.")
        .labelNames("namespace")
        .callback(cb -> source.leasesByNamespace().forEach((namespace, n) -> cb.call(n, namespace)))
        .register(registry);
    gauge(
        "leasehold_watch_lag_events",
        "Events of the watch log the furthest-behind watcher of this node has yet to read.",
        () -> source.watchLagEvents());
    gauge(
        "leasehold_raft_division_closed",
        "1 when Ratis closed this node's Raft division while the node runs (restart it), else 0.",
        () -> source.divisionClosed() ? 1 : 0);
    GaugeWithCallback.builder()
        .name("leasehold_data_dir_free_bytes")
        .help("Bytes this process may still write on the file system of the data directory.")
        .callback(
            cb -> {
              Disk d = source.dataDisk();
              if (d != null) {
                cb.call(d.usable());
              }
            })
        .register(registry);
    GaugeWithCallback.builder()
        .name("leasehold_data_dir_size_bytes")
        .help("Size of the file system of the data directory.")
        .callback(
            cb -> {
              Disk d = source.dataDisk();
              if (d != null) {
                cb.call(d.total());
              }
            })
        .register(registry);
    GaugeWithCallback.builder()
        .name("leasehold_rocksdb_memory_bytes")
        .help(
            "RocksDB memory outside the Java heap, by kind: memtables, table_readers, block_cache.")
        .labelNames("kind")
        .callback(cb -> source.storeMemoryBytes().forEach((kind, n) -> cb.call(n, kind)))
        .register(registry);
    groupGauge(
        source,
        "leasehold_raft_group_leader",
        "1 for each Raft group this node leads, 0 for the others it hosts (group 0 is the meta group).",
        g -> g.leader() ? 1 : 0);
    groupGauge(
        source,
        "leasehold_raft_group_term",
        "The current term of each Raft group this node hosts.",
        g -> g.term());
    groupGauge(
        source,
        "leasehold_raft_group_commit_index",
        "The highest log index known committed, per Raft group this node hosts.",
        g -> g.commitIndex());
    groupGauge(
        source,
        "leasehold_raft_group_applied_index",
        "The highest log index applied here, per Raft group this node hosts.",
        g -> g.appliedIndex());
    registry.register((MultiCollector) JVM::scrape);
  }

  private void groupGauge(
      Source source, String name, String help, ToDoubleFunction<GroupView> value) {
    GaugeWithCallback.builder()
        .name(name)
        .help(help)
        .labelNames("group")
        .callback(
            cb -> {
              for (GroupView g : orElse(source::groups, List.<GroupView>of())) {
                cb.call(value.applyAsDouble(g), Integer.toString(g.number()));
              }
            })
        .register(registry);
  }

  private void counter(String name, String help, DoubleSupplier value) {
    CounterWithCallback.builder()
        .name(name)
        .help(help)
        .callback(cb -> cb.call(value.getAsDouble()))
        .register(registry);
  }

  private void gauge(String name, String help, DoubleSupplier value) {
    GaugeWithCallback.builder()
        .name(name)
        .help(help)
        .callback(cb -> cb.call(value.getAsDouble()))
        .register(registry);
  }

  public PrometheusRegistry registry() {
    return registry;
  }

  public void applied(long nanos) {
    applySeconds.observe(nanos / 1e9);
  }

  /**
   * A write this node accepted was answered with its applied reply, {@code nanos} after it arrived.
   */
  public void written(long nanos) {
    writeSeconds.observe(nanos / 1e9);
  }

  public void leaderChanged() {
    leaderChanges.inc();
  }

  public void snapshotTaken() {
    snapshots.inc();
  }

  /**
   * Serves {@code /metrics} and {@code /healthz} on host:port (port 0 picks one), over HTTPS when
   * {@code https} is given; returns the port.
   */
  public synchronized int serve(
      String host, int port, BooleanSupplier serving, Optional<HttpsConfigurator> https)
      throws IOException {
    InetSocketAddress address = new InetSocketAddress(host, port);
    if (https.isPresent()) {
      HttpsServer server = HttpsServer.create(address, 16);
      server.setHttpsConfigurator(https.get());
      http = server;
    } else {
      http = HttpServer.create(address, 16);
    }
    httpThreads =
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "leasehold-metrics-http");
              t.setDaemon(true);
              return t;
            });
    http.setExecutor(httpThreads);
    http.createContext("/metrics", new MetricsHandler(registry));
    http.createContext(
        "/healthz",
        exchange -> {
          boolean ok = serving.getAsBoolean();
          text(exchange, ok ? 200 : 503, ok ? "SERVING\n" : "NOT_SERVING\n");
        });
    http.start();
    return http.getAddress().getPort();
  }

  /**
   * Serves {@code handler} at {@code path} too, once {@link #serve} has started (the dashboard's
   * {@code /ui}).
   */
  public synchronized void addContext(String path, com.sun.net.httpserver.HttpHandler handler) {
    if (http == null) {
      throw new IllegalStateException("the metrics port is not serving");
    }
    http.createContext(path, handler);
  }

  private static void text(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  /**
   * A safe reader for callbacks: a node that is closing answers with the fallback instead of
   * failing the scrape.
   */
  public static <T> T orElse(Supplier<T> read, T fallback) {
    try {
      return read.get();
    } catch (RuntimeException e) {
      return fallback;
    }
  }

  @Override
  public synchronized void close() {
    if (http != null) {
      http.stop(0);
      httpThreads.shutdownNow();
      http = null;
    }
  }
}
