package io.leasehold.cli.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;

/**
 * Reads what the server side did during a run from each node's Prometheus endpoint: the process's
 * CPU seconds and resident memory, and Leasehold's counters. A node whose endpoint cannot be read
 * is reported as unknown rather than failing the run.
 */
public final class NodeStats {
  /** One reading of one node's endpoint. */
  public record Sample(String node, long nanos, Map<String, Double> values) {
    public Optional<Double> get(String metric) {
      return Optional.ofNullable(values.get(metric));
    }
  }

  /**
   * What one node did between two samples.
   *
   * @param seconds the time between them
   * @param leader whether the node reported itself leader at the second
   */
  public record Delta(
      String node,
      Optional<Double> cores,
      Optional<Double> rssMiB,
      Map<String, Double> counters,
      double seconds,
      boolean leader) {}

  public static final String CPU = "process_cpu_seconds_total";
  public static final String RSS = "process_resident_memory_bytes";
  public static final String RENEWED = "leasehold_leases_renewed_total";
  public static final String EXPIRED = "leasehold_leases_expired_total";
  public static final String ACQUIRED = "leasehold_leases_acquired_total";
  public static final String LIVE = "leasehold_leases_live";
  public static final String RELEASED = "leasehold_leases_released_total";
  public static final String COMMIT = "leasehold_raft_commit_index";
  public static final String APPEND_BYTES = "leasehold_raft_append_received_bytes_total";
  public static final String LOG_FLUSHES = "leasehold_raft_log_flushes_total";
  static final String LEADER = "leasehold_raft_role{role=\"leader\"}";

  private final List<String> metricsAddresses;
  private final String scheme;
  private final HttpClient http;

  /**
   * @param metricsAddresses each node's metrics endpoint, {@code host:port}, over plain HTTP
   */
  public NodeStats(List<String> metricsAddresses) {
    this(metricsAddresses, Optional.empty());
  }

  /**
   * @param metricsAddresses each node's metrics endpoint, {@code host:port}
   * @param https the client side of HTTPS, for nodes whose metrics port speaks TLS
   */
  public NodeStats(List<String> metricsAddresses, Optional<SSLContext> https) {
    this.metricsAddresses = List.copyOf(metricsAddresses);
    this.scheme = https.isPresent() ? "https" : "http";
    HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2));
    https.ifPresent(b::sslContext);
    this.http = b.build();
  }

  /** Each node's metrics at the client port + 2, where a node serves them by default. */
  public static List<String> defaultMetricsAddresses(List<String> clientEndpoints) {
    List<String> out = new ArrayList<>();
    for (String e : clientEndpoints) {
      int colon = e.lastIndexOf(':');
      out.add(e.substring(0, colon) + ":" + (Integer.parseInt(e.substring(colon + 1).trim()) + 2));
    }
    return out;
  }

  public List<Sample> sample() {
    List<Sample> out = new ArrayList<>();
    for (String address : metricsAddresses) {
      Map<String, Double> values;
      try {
        HttpResponse<String> r =
            http.send(
                HttpRequest.newBuilder(URI.create(scheme + "://" + address + "/metrics"))
                    .timeout(Duration.ofSeconds(3))
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        values = r.statusCode() == 200 ? parse(r.body()) : Map.of();
      } catch (IOException e) {
        values = Map.of();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        values = Map.of();
      }
      out.add(new Sample(address, System.nanoTime(), values));
    }
    return out;
  }

  /** What each node did from {@code before} to {@code after} (the same nodes, in order). */
  public static List<Delta> between(List<Sample> before, List<Sample> after) {
    List<Delta> out = new ArrayList<>();
    for (int i = 0; i < Math.min(before.size(), after.size()); i++) {
      Sample a = before.get(i);
      Sample b = after.get(i);
      double seconds = (b.nanos() - a.nanos()) / 1e9;
      Optional<Double> cores = a.get(CPU).flatMap(x -> b.get(CPU).map(y -> (y - x) / seconds));
      Optional<Double> rss = b.get(RSS).map(v -> v / (1024 * 1024));
      Map<String, Double> counters = new LinkedHashMap<>();
      for (String c :
          List.of(RENEWED, EXPIRED, ACQUIRED, RELEASED, COMMIT, APPEND_BYTES, LOG_FLUSHES)) {
        a.get(c).ifPresent(x -> b.get(c).ifPresent(y -> counters.put(c, y - x)));
      }
      b.get(LIVE).ifPresent(v -> counters.put(LIVE, v));
      out.add(new Delta(b.node(), cores, rss, counters, seconds, b.get(LEADER).orElse(0.0) == 1.0));
    }
    return out;
  }

  /**
   * What replication cost per write (an acquisition or a release applied) between the samples, from
   * the node that led at the end and the others: each one's CPU in microseconds, the bytes of
   * AppendEntries the followers received (heartbeats included: what the leader sent), and the Raft
   * log flushes to disk. Empty unless a node led, applied writes and reported these metrics.
   */
  public static Optional<Map<String, Object>> perWrite(List<Delta> deltas) {
    Optional<Delta> leading = deltas.stream().filter(Delta::leader).findFirst();
    if (leading.isEmpty()) {
      return Optional.empty();
    }
    Delta leader = leading.get();
    double writes =
        leader.counters().getOrDefault(ACQUIRED, 0.0)
            + leader.counters().getOrDefault(RELEASED, 0.0);
    List<Delta> followers = deltas.stream().filter(d -> d != leader).toList();
    if (writes <= 0
        || leader.cores().isEmpty()
        || !leader.counters().containsKey(LOG_FLUSHES)
        || followers.stream().anyMatch(f -> !f.counters().containsKey(APPEND_BYTES))) {
      return Optional.empty();
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("writes", Math.round(writes));
    out.put("entries", Math.round(leader.counters().getOrDefault(COMMIT, 0.0)));
    out.put(
        "leader_cpu_us", BenchReport.round(leader.cores().get() * leader.seconds() * 1e6 / writes));
    out.put(
        "follower_cpu_us",
        BenchReport.round(
            followers.stream()
                    .mapToDouble(f -> f.cores().orElse(0.0) * f.seconds())
                    .average()
                    .orElse(0)
                * 1e6
                / writes));
    out.put(
        "replicated_bytes",
        BenchReport.round(
            followers.stream().mapToDouble(f -> f.counters().get(APPEND_BYTES)).sum() / writes));
    out.put("leader_fsyncs", BenchReport.round(leader.counters().get(LOG_FLUSHES) / writes));
    out.put(
        "follower_fsyncs",
        BenchReport.round(
            followers.stream()
                    .mapToDouble(f -> f.counters().getOrDefault(LOG_FLUSHES, 0.0))
                    .average()
                    .orElse(0)
                / writes));
    return Optional.of(out);
  }

  /**
   * The samples of the Prometheus text format, by name with labels dropped and values of the same
   * name summed, and each labelled series under its name with its labels as well.
   */
  static Map<String, Double> parse(String text) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int space = line.lastIndexOf(' ');
      if (space < 0) {
        continue;
      }
      String series = line.substring(0, space).trim();
      int brace = series.indexOf('{');
      String name = brace < 0 ? series : series.substring(0, brace);
      try {
        double value = Double.parseDouble(line.substring(space + 1).trim());
        out.merge(name, value, Double::sum);
        if (brace >= 0) {
          out.put(series, value); // the labelled series on its own too (the node's role)
        }
      } catch (NumberFormatException ignored) {
        // a timestamped or malformed sample: not one of ours
      }
    }
    return out;
  }
}
