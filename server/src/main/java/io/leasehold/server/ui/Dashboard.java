package io.leasehold.server.ui;

import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsExchange;
import io.grpc.MethodDescriptor;
import io.grpc.StatusException;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListRoutesRequest;
import io.leasehold.proto.v1.RoutingGrpc;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.server.auth.Authorizer;
import io.leasehold.server.raft.Consensus;
import io.leasehold.server.raft.PeerProbe;
import io.leasehold.server.watch.WatchHub;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLSession;

/**
 * The read-only dashboard on the metrics port: static pages under {@code /ui/} (from this jar and
 * the vendored Alpine.js and uPlot WebJars) and their JSON under {@code /ui/api/}. Every request is
 * authorized as the gRPC call it stands for would be; requests run on the dashboard's own threads,
 * so a slow read or an open event stream never holds up {@code /metrics} or {@code /healthz}.
 */
public final class Dashboard implements AutoCloseable {
  static final int MAX_EVENT_STREAMS = 32;
  private static final String STARTED = "leasehold.ui.started";
  // A closed tab is noticed only when a write to it fails: a comment this often finds it soon.
  static final long KEEPALIVE_MILLIS = 2_000;
  private static final String ALPINE = "META-INF/resources/webjars/alpinejs/3.14.1/dist/cdn.min.js";
  private static final String UPLOT_JS =
      "META-INF/resources/webjars/uplot/1.6.30/dist/uPlot.iife.min.js";
  private static final String UPLOT_CSS =
      "META-INF/resources/webjars/uplot/1.6.30/dist/uPlot.min.css";
  private static final Map<String, String> STATIC =
      Map.of(
          "/ui/",
          "leasehold/ui/index.html",
          "/ui/app.js",
          "leasehold/ui/app.js",
          "/ui/app.css",
          "leasehold/ui/app.css",
          "/ui/vendor/alpine.min.js",
          ALPINE,
          "/ui/vendor/uPlot.min.js",
          UPLOT_JS,
          "/ui/vendor/uPlot.min.css",
          UPLOT_CSS);

  private final DashboardApi api;
  private final PeerProbe peers;
  private final Authorizer authorizer;
  private final EventTail tail;
  private final RateHistory rates;
  private final ExecutorService requests;
  private final ExecutorService streams;
  private final AtomicInteger openStreams = new AtomicInteger();

  public Dashboard(
      String nodeId,
      java.util.function.Supplier<Consensus.Liveness> liveness,
      java.time.Duration electionTimeoutMax,
      java.time.Duration timeout,
      io.leasehold.server.api.LeasesService leases,
      io.leasehold.server.api.RoutingService routing,
      io.leasehold.server.api.AdminService admin,
      io.leasehold.server.api.ClusterService cluster,
      PeerProbe peers,
      Authorizer authorizer,
      java.util.function.Supplier<java.util.List<WatchHub>> hubs,
      PrometheusRegistry registry) {
    this.api =
        new DashboardApi(
            nodeId, liveness, electionTimeoutMax, timeout, leases, routing, admin, cluster, peers);
    this.peers = peers;
    this.authorizer = authorizer;
    this.tail = new EventTail(hubs);
    this.rates =
        new RateHistory(
            registry, RateHistory.DEFAULT_INTERVAL, RateHistory.DEFAULT_SAMPLES, nodeId);
    this.requests =
        new ThreadPoolExecutor(
            4,
            4,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(256),
            daemon("leasehold-ui-" + nodeId));
    this.streams =
        new ThreadPoolExecutor(
            0,
            MAX_EVENT_STREAMS,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            daemon("leasehold-ui-events-" + nodeId));
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  /** The handler for the {@code /ui} context: hands each request to the dashboard's threads. */
  public void handle(HttpExchange exchange) throws IOException {
    try {
      // An event stream holds its thread for as long as the tab is open: those get threads of their
      // own.
      boolean stream = exchange.getRequestURI().getPath().equals("/ui/api/events");
      (stream ? streams : requests).execute(() -> serve(exchange));
    } catch (RejectedExecutionException e) {
      error(exchange, new UiException(503, "", "the dashboard is busy; retry"));
    }
  }

  /** Hub watchers the dashboard holds now (at most one, however many tabs tail events). */
  public int hubWatchers() {
    return tail.hubWatchers();
  }

  private void serve(HttpExchange exchange) {
    exchange.setAttribute(STARTED, System.nanoTime());
    try {
      String path = exchange.getRequestURI().getPath();
      if (!exchange.getRequestMethod().equals("GET")
          && !exchange.getRequestMethod().equals("HEAD")) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        throw new UiException(405, "", "the dashboard is read-only: GET only");
      }
      if (path.equals("/ui")) {
        exchange.getResponseHeaders().set("Location", "/ui/");
        exchange.sendResponseHeaders(302, -1);
        return;
      }
      if (path.startsWith("/ui/api/")) {
        api(exchange, path.substring("/ui/api/".length()));
        return;
      }
      String resource = STATIC.get(path);
      if (resource == null) {
        throw new UiException(404, "", "no such page: " + path);
      }
      check(
          exchange, DashboardApi.clusterAccess().method(), DashboardApi.clusterAccess().request());
      sendResource(exchange, resource);
    } catch (UiException e) {
      error(exchange, e);
    } catch (IOException | RuntimeException e) {
      error(exchange, new UiException(500, "", String.valueOf(e)));
    } finally {
      exchange.close();
    }
  }

  private void api(HttpExchange exchange, String endpoint) throws UiException, IOException {
    var uri = exchange.getRequestURI();
    switch (endpoint) {
      case "cluster" -> {
        Params.of(uri, Set.of());
        check(
            exchange,
            DashboardApi.clusterAccess().method(),
            DashboardApi.clusterAccess().request());
        json(exchange, api.cluster());
      }
      case "rates" -> {
        Params.of(uri, Set.of());
        check(
            exchange,
            DashboardApi.clusterAccess().method(),
            DashboardApi.clusterAccess().request());
        json(exchange, rates.toJson());
      }
      case "leases" -> {
        ListRequest q =
            api.leasesRequest(
                Params.of(uri, Set.of("prefix", "holder", "pageToken", "limit", "stale")));
        check(exchange, LeasesGrpc.getListMethod(), q);
        json(exchange, api.leases(q));
      }
      case "lease" -> {
        GetRequest q = api.leaseRequest(Params.of(uri, Set.of("name", "stale")));
        check(exchange, LeasesGrpc.getGetMethod(), q);
        Optional<UiException> historyDenied = Optional.empty();
        try {
          check(exchange, AdminGrpc.getHistoryMethod(), api.historyRequest(q));
        } catch (UiException e) {
          historyDenied = Optional.of(e);
        }
        json(exchange, api.lease(q, historyDenied));
      }
      case "routes" -> {
        ListRoutesRequest q =
            api.routesRequest(Params.of(uri, Set.of("prefix", "pageToken", "limit", "stale")));
        check(exchange, RoutingGrpc.getListRoutesMethod(), q);
        json(exchange, api.routes(q));
      }
      case "services" -> {
        Params params = Params.of(uri, Set.of("service", "stale", "zone"));
        ListRequest q = api.servicesRequest(params);
        check(exchange, LeasesGrpc.getListMethod(), q);
        json(exchange, api.services(q, DashboardApi.zones(params)));
      }
      case "partitions" -> {
        ListRequest q = api.partitionsRequest(Params.of(uri, Set.of("group", "stale")));
        check(exchange, LeasesGrpc.getListMethod(), q);
        json(exchange, api.partitions(q));
      }
      case "events" -> events(exchange, Params.of(uri, Set.of("prefix", "types")));
      default ->
          throw new UiException(
              404,
              "",
              "no such endpoint: /ui/api/"
                  + endpoint
                  + " (there are cluster, leases, lease, routes, services, partitions, events, rates)");
    }
  }

  /**
   * Authorizes the request as the gRPC call {@code method(request)}: the caller, its role, its
   * prefixes.
   */
  private void check(HttpExchange exchange, MethodDescriptor<?, ?> method, Object request)
      throws UiException {
    SSLSession tls = exchange instanceof HttpsExchange https ? https.getSSLSession() : null;
    try {
      authorizer.check(
          exchange.getRequestHeaders().getFirst("Authorization"), tls, method, request);
    } catch (StatusException e) {
      throw UiException.of(e.getStatus());
    }
  }

  // ---- the event tail (Server-Sent Events) ----

  private void events(HttpExchange exchange, Params p) throws UiException, IOException {
    String prefix = p.text("prefix");
    Set<Event.Type> types = EnumSet.noneOf(Event.Type.class);
    for (String t : p.text("types").split(",")) {
      if (t.isBlank()) {
        continue;
      }
      try {
        Event.Type type = Event.Type.valueOf(t.strip().toUpperCase(java.util.Locale.ROOT));
        if (type == Event.Type.UNRECOGNIZED
            || type == Event.Type.TYPE_UNSPECIFIED
            || type == Event.Type.RENEWED) {
          throw new IllegalArgumentException();
        }
        types.add(type);
      } catch (IllegalArgumentException e) {
        throw UiException.badParameter(
            "types",
            "a comma-separated list of ACQUIRED, UPDATED, RELEASED, EXPIRED, REVOKED, "
                + "POLICY_CHANGED (renewals are not tailed), got '"
                + t
                + "'");
      }
    }
    check(
        exchange, LeasesGrpc.getWatchMethod(), WatchRequest.newBuilder().setPrefix(prefix).build());
    if (openStreams.incrementAndGet() > MAX_EVENT_STREAMS) {
      openStreams.decrementAndGet();
      throw new UiException(
          503,
          "",
          "too many open event streams on this node (at most "
              + MAX_EVENT_STREAMS
              + "); close a tab");
    }
    try {
      exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      exchange.sendResponseHeaders(200, 0);
      EventTail.Tab tab = tail.open(prefix, types);
      try {
        streamTo(exchange.getResponseBody(), tab);
      } finally {
        tail.close(tab);
      }
    } finally {
      openStreams.decrementAndGet();
    }
  }

  private void streamTo(OutputStream out, EventTail.Tab tab) throws IOException {
    out.write(": subscribed\n\nevent: ready\ndata: {}\n\n".getBytes(StandardCharsets.UTF_8));
    out.flush();
    while (!tab.dropped) {
      String event;
      try {
        event = tab.queue.poll(KEEPALIVE_MILLIS, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (tab.dropped) {
        break;
      }
      out.write(
          (event == null ? ": keepalive\n\n" : "data: " + event + "\n\n")
              .getBytes(StandardCharsets.UTF_8));
      out.flush();
    }
    // The browser's EventSource reconnects by itself.
    out.write(
        "event: dropped\ndata: {\"reason\":\"this tab fell behind or the node's watch ended; reconnecting\"}\n\n"
            .getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  // ---- responses ----

  private static void json(HttpExchange exchange, JsonObject body) throws IOException {
    send(
        exchange,
        200,
        "application/json; charset=utf-8",
        body.toString().getBytes(StandardCharsets.UTF_8));
  }

  private static void error(HttpExchange exchange, UiException e) {
    JsonObject o = new JsonObject();
    o.addProperty("error", e.getMessage());
    if (!e.field().isEmpty()) {
      o.addProperty("parameter", e.field());
    }
    o.addProperty("status", e.httpStatus());
    try {
      send(
          exchange,
          e.httpStatus(),
          "application/json; charset=utf-8",
          o.toString().getBytes(StandardCharsets.UTF_8));
    } catch (IOException | RuntimeException ignored) {
      // The browser went away.
    }
  }

  private static void sendResource(HttpExchange exchange, String resource)
      throws IOException, UiException {
    try (InputStream in = Dashboard.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new UiException(500, "", "missing from the jar: " + resource);
      }
      String type =
          resource.endsWith(".html")
              ? "text/html; charset=utf-8"
              : resource.endsWith(".css")
                  ? "text/css; charset=utf-8"
                  : "text/javascript; charset=utf-8";
      send(exchange, 200, type, in.readAllBytes());
    }
  }

  private static void send(HttpExchange exchange, int status, String type, byte[] body)
      throws IOException {
    exchange.getResponseHeaders().set("Content-Type", type);
    // The time the node took, for browsers' developer tools and the dashboard benchmark.
    if (exchange.getAttribute(STARTED) instanceof Long started) {
      exchange
          .getResponseHeaders()
          .set(
              "Server-Timing",
              String.format(
                  java.util.Locale.ROOT, "node;dur=%.3f", (System.nanoTime() - started) / 1e6));
    }
    exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
    boolean head = exchange.getRequestMethod().equals("HEAD");
    exchange.sendResponseHeaders(status, head ? -1 : body.length == 0 ? -1 : body.length);
    if (!head && body.length > 0) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void close() {
    tail.close();
    rates.close();
    requests.shutdownNow();
    streams.shutdownNow();
    peers.close();
  }
}
