package io.leasehold.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.management.ObjectName;

/**
 * Live objects by class, from the JVM's {@code GC.class_histogram} (which runs a full collection
 * first).
 */
public final class Histogram {
  /** One class's live instances and their bytes. */
  public record Row(long instances, long bytes) {}

  /** What one class grew by between two histograms, divided by {@code per}. */
  public record Growth(String type, double instances, double bytes) {}

  private Histogram() {}

  /** The live heap now, by class name. */
  public static Map<String, Row> take() throws Exception {
    String text =
        (String)
            ManagementFactory.getPlatformMBeanServer()
                .invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"),
                    "gcClassHistogram",
                    new Object[] {new String[0]},
                    new String[] {String[].class.getName()});
    Map<String, Row> rows = new HashMap<>();
    for (String line : text.split("\n")) {
      String[] f = line.trim().split("\\s+");
      // "  num:  #instances  #bytes  class name (module)"
      if (f.length >= 4 && f[0].endsWith(":")) {
        rows.merge(
            f[3],
            new Row(Long.parseLong(f[1]), Long.parseLong(f[2])),
            (a, b) -> new Row(a.instances() + b.instances(), a.bytes() + b.bytes()));
      }
    }
    return rows;
  }

  /**
   * The classes that grew from {@code before} to {@code after} by at least 0.01 instances or one
   * byte per {@code per}, the most bytes first.
   */
  public static List<Growth> growth(Map<String, Row> before, Map<String, Row> after, long per) {
    List<Growth> grown = new ArrayList<>();
    for (Map.Entry<String, Row> e : after.entrySet()) {
      Row b = before.getOrDefault(e.getKey(), new Row(0, 0));
      double instances = (e.getValue().instances() - b.instances()) / (double) per;
      double bytes = (e.getValue().bytes() - b.bytes()) / (double) per;
      if (instances >= 0.01 || bytes >= 1) {
        grown.add(new Growth(e.getKey(), instances, bytes));
      }
    }
    grown.sort((x, y) -> Double.compare(y.bytes(), x.bytes()));
    return grown;
  }

  /**
   * What every class together grew by from {@code before} to {@code after}, divided by {@code per}.
   */
  public static Growth total(Map<String, Row> before, Map<String, Row> after, long per) {
    long instances = 0;
    long bytes = 0;
    for (Map.Entry<String, Row> e : after.entrySet()) {
      Row b = before.getOrDefault(e.getKey(), new Row(0, 0));
      instances += e.getValue().instances() - b.instances();
      bytes += e.getValue().bytes() - b.bytes();
    }
    for (Map.Entry<String, Row> e : before.entrySet()) {
      if (!after.containsKey(e.getKey())) {
        instances -= e.getValue().instances();
        bytes -= e.getValue().bytes();
      }
    }
    return new Growth("in all", instances / (double) per, bytes / (double) per);
  }
}
