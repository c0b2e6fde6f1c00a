// How to run (nodes started with `leasehold server ... --trace-writes /tmp/trace.<id>` on one
// host):
//
//   java -cp benchmarks/target/benchmarks.jar io.leasehold.benchmarks.WriteTraceReport [--last N]
// /tmp/trace.n1 /tmp/trace.n2 /tmp/trace.n3
package io.leasehold.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where a write's time goes, from the nodes' write traces ({@code --trace-writes}): for each log
 * entry a client proposed, every step's time after the first proposal of that entry, on any node;
 * printed as the median and 90th percentile of each step over the last entries, in the order the
 * median gives them. The nodes must share a host: their times are one monotonic clock.
 */
public final class WriteTraceReport {
  private WriteTraceReport() {}

  public static void main(String[] args) throws IOException {
    int last = 1000;
    List<Path> files = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--last")) {
        last = Integer.parseInt(args[++i]);
      } else {
        files.add(Path.of(args[i]));
      }
    }
    if (files.isEmpty()) {
      System.err.println("usage: WriteTraceReport [--last N] TRACE_FILE...");
      System.exit(2);
    }
    System.out.print(report(files, last));
  }

  static String report(List<Path> files, int last) throws IOException {
    // entry index -> "node step" -> the first time seen
    TreeMap<Long, Map<String, Long>> entries = new TreeMap<>();
    for (Path f : files) {
      for (String line : Files.readAllLines(f)) {
        String[] p = line.trim().split(" ");
        if (p.length != 4) {
          continue;
        }
        long index;
        long nanos;
        try {
          index = Long.parseLong(p[2]);
          nanos = Long.parseLong(p[3]);
        } catch (NumberFormatException e) {
          continue;
        }
        entries
            .computeIfAbsent(index, i -> new HashMap<>())
            .merge(p[0] + " " + p[1], nanos, Math::min);
      }
    }
    List<Map<String, Long>> proposed = new ArrayList<>();
    for (Map<String, Long> steps : entries.descendingMap().values()) {
      if (steps.keySet().stream().anyMatch(k -> k.endsWith(" propose"))) {
        proposed.add(steps);
        if (proposed.size() == last) {
          break;
        }
      }
    }
    Map<String, List<Double>> offsets = new HashMap<>();
    for (Map<String, Long> steps : proposed) {
      long start =
          steps.entrySet().stream()
              .filter(e -> e.getKey().endsWith(" propose"))
              .mapToLong(Map.Entry::getValue)
              .min()
              .orElseThrow();
      steps.forEach(
          (step, t) ->
              offsets.computeIfAbsent(step, s -> new ArrayList<>()).add((t - start) / 1e6));
    }
    List<Map.Entry<String, double[]>> rows = new ArrayList<>();
    offsets.forEach(
        (step, v) -> {
          Collections.sort(v);
          rows.add(
              Map.entry(
                  step,
                  new double[] {v.get(v.size() / 2), v.get((int) (v.size() * 0.9)), v.size()}));
        });
    rows.sort((a, b) -> Double.compare(a.getValue()[0], b.getValue()[0]));
    StringBuilder out =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "%d proposed entries; ms after the entry's first proposal%n",
                proposed.size()));
    out.append(
        String.format(Locale.ROOT, "%-32s %9s %9s %7s%n", "node step", "p50", "p90", "seen"));
    for (Map.Entry<String, double[]> r : rows) {
      out.append(
          String.format(
              Locale.ROOT,
              "%-32s %9.3f %9.3f %7d%n",
              r.getKey(),
              r.getValue()[0],
              r.getValue()[1],
              (long) r.getValue()[2]));
    }
    return out.toString();
  }
}
