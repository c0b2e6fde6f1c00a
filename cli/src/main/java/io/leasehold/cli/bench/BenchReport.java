package io.leasehold.cli.bench;

import io.leasehold.cli.Json;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What one workload run measured: the system and settings, the figures, the server side (cores and
 * memory per node) and notes. Printed as a table for people and as one JSON object ({@code -o
 * json}) for {@code benchmarks/compare.sh}, which sets runs of two systems side by side.
 */
public final class BenchReport {
  private final String workload;
  private final String system;
  private final Map<String, Object> settings = new LinkedHashMap<>();
  private final Map<String, Object> results = new LinkedHashMap<>();
  private final List<Map<String, Object>> nodes = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();

  public BenchReport(String workload, String system) {
    this.workload = workload;
    this.system = system;
  }

  public BenchReport setting(String key, Object value) {
    settings.put(key, value);
    return this;
  }

  public BenchReport result(String key, Object value) {
    results.put(key, value instanceof Double d ? round(d) : value);
    return this;
  }

  public BenchReport latency(String key, Latency.Percentiles p) {
    results.put(key, p.json());
    return this;
  }

  public BenchReport note(String note) {
    notes.add(note);
    return this;
  }

  /** Each node's cores (average over the measured period) and resident memory at its end. */
  public BenchReport nodes(List<NodeStats.Delta> deltas) {
    for (NodeStats.Delta d : deltas) {
      Map<String, Object> n =
          Json.object(
              "metrics",
              d.node(),
              "cores",
              d.cores().map(BenchReport::round).orElse(null),
              "rss_mib",
              d.rssMiB().map(v -> (double) Math.round(v)).orElse(null));
      d.counters().forEach((k, v) -> n.put(k, v));
      nodes.add(n);
    }
    return this;
  }

  public String workload() {
    return workload;
  }

  public Object result(String key) {
    return results.get(key);
  }

  public Map<String, Object> json() {
    return Json.object(
        "workload",
        workload,
        "system",
        system,
        "settings",
        settings,
        "results",
        results,
        "nodes",
        nodes,
        "notes",
        notes);
  }

  public void printTable(PrintWriter out) {
    out.printf("%s against %s%n", workload, system);
    settings.forEach((k, v) -> out.printf("  %-28s %s%n", k, v));
    out.println();
    results.forEach((k, v) -> out.printf("  %-28s %s%n", k, human(v)));
    if (!nodes.isEmpty()) {
      out.println();
      out.printf("  %-22s %8s %9s%n", "node (metrics)", "cores", "rss MiB");
      for (Map<String, Object> n : nodes) {
        out.printf(
            "  %-22s %8s %9s%n",
            n.get("metrics"),
            n.get("cores") == null ? "?" : n.get("cores"),
            n.get("rss_mib") == null ? "?" : n.get("rss_mib"));
      }
    }
    notes.forEach(n -> out.printf("%n  note: %s", n));
    if (!notes.isEmpty()) {
      out.println();
    }
    out.flush();
  }

  @SuppressWarnings("unchecked")
  private static String human(Object v) {
    if (v instanceof Map<?, ?> m && m.containsKey("p50_ms")) {
      Map<String, Object> p = (Map<String, Object>) m;
      return String.format(
          Locale.ROOT,
          "p50 %s  p90 %s  p99 %s  p99.9 %s  max %s ms  (%s)",
          p.get("p50_ms"),
          p.get("p90_ms"),
          p.get("p99_ms"),
          p.get("p999_ms"),
          p.get("max_ms"),
          p.get("count"));
    }
    if (v instanceof Double d) {
      return String.format(Locale.ROOT, "%,.1f", d);
    }
    return String.valueOf(v);
  }

  static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}
