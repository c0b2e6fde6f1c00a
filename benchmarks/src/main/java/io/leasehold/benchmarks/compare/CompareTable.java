package io.leasehold.benchmarks.compare;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The side-by-side table of {@code benchmarks/compare.sh}: reads the JSON lines of every run
 * (Leasehold's from {@code leasehold bench} through the Java SDK and from {@link RawBench} through
 * the generated gRPC stubs, etcd's from {@link EtcdBench}) and prints, for each workload and
 * figure, every round's value for each system and the ratio of the medians. For etcd the better of
 * its acquire-release shapes is the anchor, per round. Leasehold's rows through the SDK carry no
 * mark; RawBench's say how the calls were spread ("raw spread"); runs with a phase (the cold phase
 * on fresh clusters, "cold") have rows of their own, compared with etcd's runs of the same phase,
 * after the others, with each window's throughput when the runs report windows.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.leasehold.benchmarks.compare.CompareTable results.jsonl
 * </pre>
 */
public final class CompareTable {
  /** One figure of one workload: how to read it and which way is better. */
  record Figure(
      String workload,
      String label,
      Function<JsonObject, Optional<Double>> read,
      boolean higherIsBetter,
      Function<JsonObject, String> key) {}

  private CompareTable() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: CompareTable RESULTS.jsonl");
      System.exit(2);
    }
    print(read(Path.of(args[0])), System.out);
  }

  static List<JsonObject> read(Path file) throws IOException {
    List<JsonObject> runs = new ArrayList<>();
    for (String line : Files.readAllLines(file)) {
      if (line.isBlank()) {
        continue;
      }
      JsonElement e = JsonParser.parseString(line);
      if (e.isJsonObject()) {
        runs.add(e.getAsJsonObject());
      }
    }
    return runs;
  }

  static Optional<Double> number(JsonObject run, String... path) {
    JsonElement e = run;
    for (String p : path) {
      if (e == null
          || !e.isJsonObject()
          || !e.getAsJsonObject().has(p)
          || e.getAsJsonObject().get(p).isJsonNull()) {
        return Optional.empty();
      }
      e = e.getAsJsonObject().get(p);
    }
    return e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber()
        ? Optional.of(e.getAsDouble())
        : Optional.empty();
  }

  static String setting(JsonObject run, String name) {
    JsonObject s = run.getAsJsonObject("settings");
    return s != null && s.has(name) ? s.get(name).getAsString() : "";
  }

  static Optional<Double> busiestNode(JsonObject run) {
    double max = -1;
    for (JsonElement n : run.getAsJsonArray("nodes")) {
      JsonElement c = n.getAsJsonObject().get("cores");
      if (c != null && !c.isJsonNull()) {
        max = Math.max(max, c.getAsDouble());
      }
    }
    return max < 0 ? Optional.empty() : Optional.of(max);
  }

  static final List<Figure> FIGURES =
      List.of(
          new Figure(
              "acquire-release",
              "cycles/s",
              r -> number(r, "results", "cycles_per_s"),
              true,
              r -> "clients " + setting(r, "clients")),
          new Figure(
              "acquire-release",
              "acquire p50 ms",
              r -> number(r, "results", "acquire", "p50_ms"),
              false,
              r -> "clients " + setting(r, "clients")),
          new Figure(
              "acquire-release",
              "acquire p99 ms",
              r -> number(r, "results", "acquire", "p99_ms"),
              false,
              r -> "clients " + setting(r, "clients")),
          new Figure(
              "renew",
              "busiest node, cores",
              CompareTable::busiestNode,
              false,
              r -> setting(r, "leases") + " names"),
          new Figure(
              "renew",
              "false expiries",
              r -> number(r, "results", "false_expiries"),
              false,
              r -> setting(r, "leases") + " names"),
          new Figure(
              "contended-lock",
              "hand-overs/s",
              r -> number(r, "results", "acquisitions_per_s"),
              true,
              r -> setting(r, "clients") + " clients"),
          new Figure(
              "contended-lock",
              "lock wait p99 ms",
              r -> number(r, "results", "lock_wait", "p99_ms"),
              false,
              r -> setting(r, "clients") + " clients"),
          new Figure(
              "contended-lock",
              "violations",
              r ->
                  number(r, "results", "fencing_violations")
                      .flatMap(f -> number(r, "results", "exclusion_violations").map(x -> f + x)),
              false,
              r -> setting(r, "clients") + " clients"),
          new Figure(
              "watch",
              "leader p99 ms",
              r -> number(r, "results", "leader_send_to_watch", "p99_ms"),
              false,
              r -> setting(r, "rate_per_s") + "/s"),
          new Figure(
              "watch",
              "follower p99 ms",
              r -> number(r, "results", "follower_send_to_watch", "p99_ms"),
              false,
              r -> setting(r, "rate_per_s") + "/s"),
          new Figure(
              "watch",
              "events missing",
              r ->
                  number(r, "results", "leader_events_missing")
                      .flatMap(
                          a -> number(r, "results", "follower_events_missing").map(b -> a + b)),
              false,
              r -> setting(r, "rate_per_s") + "/s"),
          new Figure(
              "failover",
              "median kill to acquire ms",
              r -> number(r, "results", "median_kill_to_acquire_ms"),
              false,
              r -> setting(r, "kills") + " kills"),
          new Figure(
              "failover",
              "leases lost",
              r -> number(r, "results", "leases_lost"),
              false,
              r -> setting(r, "kills") + " kills"));

  /**
   * The acquire-release figures of each window ({@code --windows}), as many as the longest run has:
   * for the cold phase.
   */
  static List<Figure> windowFigures(List<JsonObject> runs) {
    List<Figure> out = new ArrayList<>();
    for (JsonObject r : runs) {
      if (!"acquire-release".equals(r.get("workload").getAsString())) {
        continue;
      }
      JsonArray windows = windows(r);
      for (int i = out.size(); i < windows.size(); i++) {
        int index = i;
        JsonObject w = windows.get(i).getAsJsonObject();
        String label =
            "cycles/s in "
                + seconds(w.get("from_s").getAsDouble())
                + "-"
                + seconds(w.get("to_s").getAsDouble())
                + " s";
        out.add(
            new Figure(
                "acquire-release",
                label,
                run -> {
                  JsonArray ws = windows(run);
                  return ws.size() > index
                      ? number(ws.get(index).getAsJsonObject(), "cycles_per_s")
                      : Optional.empty();
                },
                true,
                run -> "clients " + setting(run, "clients")));
      }
    }
    return out;
  }

  private static JsonArray windows(JsonObject run) {
    JsonObject results = run.getAsJsonObject("results");
    JsonElement w = results == null ? null : results.get("windows");
    return w != null && w.isJsonArray() ? w.getAsJsonArray() : new JsonArray();
  }

  private static String seconds(double s) {
    return s == Math.rint(s) ? Long.toString((long) s) : String.format(Locale.ROOT, "%.1f", s);
  }

  /**
   * Every figure the table shows for these runs: {@link #FIGURES}, the window figures after
   * acquire-release's.
   */
  static List<Figure> figures(List<JsonObject> runs) {
    List<Figure> out = new ArrayList<>();
    List<Figure> windows = windowFigures(runs);
    for (int i = 0; i < FIGURES.size(); i++) {
      out.add(FIGURES.get(i));
      boolean lastOfAcquireRelease =
          FIGURES.get(i).workload().equals("acquire-release")
              && (i + 1 == FIGURES.size()
                  || !FIGURES.get(i + 1).workload().equals("acquire-release"));
      if (lastOfAcquireRelease) {
        out.addAll(windows);
      }
    }
    return out;
  }

  static boolean isEtcd(JsonObject run) {
    return run.get("system").getAsString().startsWith("etcd");
  }

  /**
   * How a Leasehold run reached the cluster: "" through the Java SDK ({@code leasehold bench}),
   * "raw spread", "raw leader" or "raw node" through the generated gRPC stubs ({@link RawBench}).
   */
  static String variant(JsonObject run) {
    String system = run.get("system").getAsString();
    if (system.equals(RawBench.SYSTEM)) {
      String mode = setting(run, "mode");
      return "raw " + (mode.isEmpty() ? "spread" : mode);
    }
    return system.equals("leasehold") ? "" : system.replaceFirst("^leasehold-", "");
  }

  /**
   * A table row's runs: a figure's key (e.g. "clients 16") in one phase ("": after the JIT warm-up;
   * "cold": a fresh cluster).
   */
  record Group(String key, String phase) {
    String label() {
      return phase.isEmpty() ? key : key + ", " + phase;
    }
  }

  static void print(List<JsonObject> runs, PrintStream out) {
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "workload / figure",
          "etcd (each round; shape)",
          "Leasehold (each round)",
          "Leasehold vs etcd"
        });
    for (Figure f : figures(runs)) {
      // group -> values in run order: etcd's by shape (the better one per round is the anchor),
      // Leasehold's by variant.
      Map<Group, List<Double>> etcd = new LinkedHashMap<>();
      Map<Group, List<String>> etcdShape = new LinkedHashMap<>();
      Map<Group, Map<String, List<Double>>> leasehold = new LinkedHashMap<>();
      Map<Group, Map<String, List<Double>>> etcdByShape = new LinkedHashMap<>();
      for (JsonObject r : runs) {
        if (!f.workload().equals(r.get("workload").getAsString())) {
          continue;
        }
        Optional<Double> v = f.read().apply(r);
        if (v.isEmpty()) {
          continue;
        }
        Group group = new Group(f.key().apply(r), setting(r, "phase"));
        if (isEtcd(r)) {
          etcdByShape
              .computeIfAbsent(group, k -> new LinkedHashMap<>())
              .computeIfAbsent(r.get("system").getAsString(), s -> new ArrayList<>())
              .add(v.get());
        } else {
          leasehold
              .computeIfAbsent(group, k -> new LinkedHashMap<>())
              .computeIfAbsent(variant(r), s -> new ArrayList<>())
              .add(v.get());
        }
      }
      etcdByShape.forEach(
          (group, shapes) -> {
            int rounds = shapes.values().stream().mapToInt(List::size).max().orElse(0);
            for (int i = 0; i < rounds; i++) {
              int round = i;
              Map.Entry<String, Double> best =
                  shapes.entrySet().stream()
                      .filter(e -> e.getValue().size() > round)
                      .map(e -> Map.entry(e.getKey(), e.getValue().get(round)))
                      .max(
                          Comparator.comparingDouble(
                              e -> f.higherIsBetter() ? e.getValue() : -e.getValue()))
                      .orElseThrow();
              etcd.computeIfAbsent(group, k -> new ArrayList<>()).add(best.getValue());
              etcdShape
                  .computeIfAbsent(group, k -> new ArrayList<>())
                  .add(best.getKey().replace("etcd-", ""));
            }
          });
      List<Group> groups = new ArrayList<>(leasehold.keySet());
      etcd.keySet().stream().filter(k -> !groups.contains(k)).forEach(groups::add);
      // After the JIT warm-up first, then each phase (stable: in the order the runs came).
      groups.sort(Comparator.comparing(g -> !g.phase().isEmpty()));
      for (Group group : groups) {
        List<Double> e = etcd.getOrDefault(group, List.of());
        String shapes =
            etcdShape.getOrDefault(group, List.of()).stream()
                .distinct()
                .reduce((a, b) -> a + "/" + b)
                .map(s -> " " + s)
                .orElse("");
        Map<String, List<Double>> variants = new LinkedHashMap<>();
        Map<String, List<Double>> seen = leasehold.getOrDefault(group, Map.of());
        if (seen.containsKey("")) {
          variants.put("", seen.get("")); // the SDK's row first
        }
        variants.putAll(seen);
        if (variants.isEmpty()) {
          variants.put("", List.of());
        }
        variants.forEach(
            (variant, l) -> {
              String row =
                  f.workload()
                      + " "
                      + group.label()
                      + (variant.isEmpty() ? "" : ", " + variant)
                      + ", "
                      + f.label();
              rows.add(new String[] {row, values(e) + shapes, values(l), ratio(f, e, l)});
            });
      }
    }
    // Columns as wide as their widest cell, two spaces apart.
    int[] width = new int[3];
    for (String[] r : rows) {
      for (int i = 0; i < width.length; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    for (String[] r : rows) {
      out.printf(
          "%-" + width[0] + "s  %-" + width[1] + "s  %-" + width[2] + "s  %s%n", (Object[]) r);
    }
  }

  static String values(List<Double> v) {
    return v.isEmpty() ? "-" : String.join(", ", v.stream().map(CompareTable::format).toList());
  }

  static String format(double v) {
    return Math.abs(v) >= 100
        ? String.format(Locale.ROOT, "%,.0f", v)
        : String.format(Locale.ROOT, "%.2f", v);
  }

  static double median(List<Double> v) {
    List<Double> s = new ArrayList<>(v);
    s.sort(null);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  /**
   * Leasehold's median over etcd's for higher-is-better figures, etcd's over Leasehold's otherwise:
   * above 1, Leasehold is ahead.
   */
  static String ratio(Figure f, List<Double> etcd, List<Double> leasehold) {
    if (etcd.isEmpty() || leasehold.isEmpty()) {
      return "-";
    }
    double e = median(etcd);
    double l = median(leasehold);
    if (f.label().contains("violations")
        || f.label().contains("lost")
        || f.label().contains("missing")
        || f.label().contains("expiries")) {
      return l == 0 && e == 0 ? "both none" : l == 0 ? "Leasehold none" : "Leasehold " + format(l);
    }
    double r = f.higherIsBetter() ? l / Math.max(e, 1e-9) : e / Math.max(l, 1e-9);
    return String.format(Locale.ROOT, "%.2fx%s", r, r >= 1 ? "" : " (behind)");
  }
}
