package io.leasehold.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.client.EventType;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchEvent;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every series the Grafana dashboard and the alert rules of deploy/monitoring/ name is in a real
 * node's /metrics: the packaged jar runs a standalone node, an SDK client acquires, renews,
 * releases and lets a lease expire while a watcher follows, and then each selector's metric name
 * (and its equality matchers) must match a sample of the exposition.
 */
class MonitoringMetricsIT {
  @TempDir Path dir;
  Path jar = Path.of(System.getProperty("leasehold.jar", "../cli/target/leasehold.jar"));
  final List<Process> nodes = new ArrayList<>();
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @AfterEach
  void stop() throws InterruptedException {
    for (Process p : nodes) {
      p.destroy();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void everySeriesTheDashboardAndTheRulesNameIsInTheNodesMetrics() throws Exception {
    int client = LocalProcesses.freePort();
    int metrics = LocalProcesses.freePort();
    Path log = dir.resolve("n1.log");
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp")),
            "-jar",
            jar.toAbsolutePath().toString(),
            "server",
            "--standalone",
            "--client-port",
            Integer.toString(client),
            "--peer-port",
            Integer.toString(LocalProcesses.freePort()),
            "--metrics-port",
            Integer.toString(metrics),
            "--data-dir",
            dir.resolve("data").toString());
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("LEASEHOLD_"));
    nodes.add(pb.start());
    URI healthz = URI.create("http://127.0.0.1:" + metrics + "/healthz");
    await("the node serves", Duration.ofSeconds(60), () -> status(healthz) == 200, log);

    String endpoint = "127.0.0.1:" + client;
    List<WatchEvent> events = new CopyOnWriteArrayList<>();
    try (LeaseholdClient holder =
            LeaseholdClient.builder().endpoints(endpoint).holder("monitoring-a").build();
        Watch watch = holder.watch("", 0, events::add)) {
      // A lease the client renews (TTL 2 s: it renews well within a few seconds), then releases.
      Lease renewed =
          holder
              .blocking()
              .acquire("lock/monitoring", LeaseOptions.defaults().withTtl(Duration.ofSeconds(2)));
      await(
          "the client renews its lease",
          Duration.ofSeconds(20),
          () -> sample(metrics, "leasehold_leases_renewed_total") >= 1,
          log);
      // A lease whose client goes away without releasing it: it expires.
      try (LeaseholdClient gone =
          LeaseholdClient.builder()
              .endpoints(endpoint)
              .holder("monitoring-b")
              .releaseOnClose(false)
              .build()) {
        gone.blocking()
            .acquire(
                "service/monitoring/i-1", LeaseOptions.defaults().withTtl(Duration.ofSeconds(2)));
      }
      await(
          "the abandoned lease expires and the watcher sees it",
          Duration.ofSeconds(30),
          () ->
              events.stream()
                  .anyMatch(
                      e ->
                          e.type() == EventType.EXPIRED
                              && e.name().equals("service/monitoring/i-1")),
          log);
      assertTrue(holder.blocking().release(renewed.name(), renewed.token()));
      holder
          .blocking()
          .acquire("queue/monitoring", LeaseOptions.defaults().withTtl(Duration.ofSeconds(60)));
      await(
          "the leases by namespace are counted",
          Duration.ofSeconds(20),
          () ->
              scrape(metrics).contains("leasehold_leases_live_by_namespace{namespace=\"queue\"} 1"),
          log);

      String exposition = scrape(metrics);
      Map<String, List<Map<String, String>>> samples = MonitoringKit.exposition(exposition);
      assertTrue(
          sample(metrics, "leasehold_leases_expired_total") >= 1
              && sample(metrics, "leasehold_leases_acquired_total") >= 3);
      assertTrue(
          sample(metrics, "leasehold_watchers") >= 1,
          "the watcher is open while the series are read");

      MonitoringKit kit = MonitoringKit.here();
      Map<String, String> queries =
          new LinkedHashMap<>(MonitoringKit.dashboardQueries(kit.dashboard()));
      queries.putAll(MonitoringKit.ruleQueries(kit.rules()));
      assertTrue(queries.size() > 30, "queries read: " + queries.size());
      List<String> missing = MonitoringKit.missing(queries, samples);
      assertEquals(
          List.of(), missing, "series the monitoring kit names that the node does not export");
    }
  }

  String scrape(int port) {
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode());
      return r.body();
    } catch (IOException | InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /** The value of an unlabelled sample; -1 when it is absent. */
  double sample(int port, String name) {
    for (String line : scrape(port).split("\n")) {
      if (line.startsWith(name + " ")) {
        return Double.parseDouble(line.substring(name.length() + 1).strip().split(" ")[0]);
      }
    }
    return -1;
  }

  int status(URI uri) {
    try {
      return http.send(
              HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  static void await(String what, Duration timeout, BooleanSupplier condition, Path log)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(
            "timed out after "
                + timeout.toSeconds()
                + " s waiting for "
                + what
                + "; node log:\n"
                + (Files.exists(log) ? Files.readString(log) : "(none)"));
      }
      TimeUnit.MILLISECONDS.sleep(200);
    }
  }
}
