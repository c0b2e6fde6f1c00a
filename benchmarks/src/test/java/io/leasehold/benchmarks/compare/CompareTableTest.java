package io.leasehold.benchmarks.compare;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The table's rows: the SDK's, the raw client's and the cold phase's, each against etcd's better
 * shape.
 */
class CompareTableTest {
  private static JsonObject run(
      String system,
      int clients,
      double cycles,
      double p99,
      String extraSettings,
      String extraResults) {
    return JsonParser.parseString(
            String.format(
                Locale.ROOT,
                "{\"workload\":\"acquire-release\",\"system\":\"%s\",\"settings\":{\"clients\":%d%s},"
                    + "\"results\":{\"cycles_per_s\":%s,\"acquire\":{\"p50_ms\":1.0,\"p99_ms\":%s}%s},\"nodes\":[],\"notes\":[]}",
                system,
                clients,
                extraSettings,
                cycles,
                p99,
                extraResults))
        .getAsJsonObject();
  }

  private static String windows(double... cyclesPerS) {
    List<String> w = new ArrayList<>();
    for (int i = 0; i < cyclesPerS.length; i++) {
      w.add(
          String.format(
              Locale.ROOT,
              "{\"from_s\":%d,\"to_s\":%d,\"cycles\":%d,\"cycles_per_s\":%s,\"errors\":0}",
              5 * i,
              5 * (i + 1),
              (long) (cyclesPerS[i] * 5),
              cyclesPerS[i]));
    }
    return ",\"windows\":[" + String.join(",", w) + "]";
  }

  private static List<String> table(List<JsonObject> runs) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CompareTable.print(runs, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return Arrays.asList(bytes.toString(StandardCharsets.UTF_8).split("\n"));
  }

  /**
   * The row whose label is exactly {@code label}, split into its columns (two spaces apart at
   * least).
   */
  private static List<String> row(List<String> table, String label) {
    List<String> rows = table.stream().filter(l -> l.startsWith(label + "  ")).toList();
    assertEquals(1, rows.size(), "one row '" + label + "' in\n" + String.join("\n", table));
    return Arrays.asList(rows.get(0).trim().split("\\s{2,}"));
  }

  private static final List<JsonObject> RUNS =
      List.of(
          // The cold phase comes first in results.jsonl.
          run(
              "leasehold-raw",
              16,
              300,
              90,
              ",\"mode\":\"spread\",\"phase\":\"cold\",\"window_s\":5",
              windows(100, 300, 500)),
          run(
              "etcd-session",
              16,
              900,
              30,
              ",\"phase\":\"cold\",\"window_s\":5",
              windows(800, 900, 1000)),
          // Two rounds after the warm-up: SDK, raw spread, etcd's two shapes.
          run("leasehold", 16, 1200, 20, "", ""),
          run("leasehold-raw", 16, 1000, 25, ",\"mode\":\"spread\"", ""),
          run("etcd-session", 16, 1000, 30, "", ""),
          run("etcd-lease", 16, 700, 40, "", ""),
          run("etcd-session", 16, 1100, 28, "", ""),
          run("etcd-lease", 16, 600, 45, "", ""),
          run("leasehold", 16, 1400, 22, "", ""),
          run("leasehold-raw", 16, 800, 35, ",\"mode\":\"spread\"", ""));

  @Test
  void theSdkRowIsUnchangedAndTheRawClientIsNeverTakenForAnEtcdShape() {
    List<String> t = table(RUNS);
    assertEquals(
        List.of(
            "acquire-release clients 16, cycles/s",
            "1,000, 1,100 session",
            "1,200, 1,400",
            "1.24x"),
        row(t, "acquire-release clients 16, cycles/s"));
  }

  @Test
  void theRawSpreadRowIsSetAgainstEtcdsBetterShape() {
    List<String> t = table(RUNS);
    assertEquals(
        List.of(
            "acquire-release clients 16, raw spread, cycles/s",
            "1,000, 1,100 session",
            "1,000, 800",
            "0.86x (behind)"),
        row(t, "acquire-release clients 16, raw spread, cycles/s"));
    // Latency: etcd's over Leasehold's, so above 1 is Leasehold ahead; median of 25 and 35 is 30,
    // etcd's 29.
    assertEquals(
        List.of(
            "acquire-release clients 16, raw spread, acquire p99 ms",
            "30.00, 28.00 session",
            "25.00, 35.00",
            "0.97x (behind)"),
        row(t, "acquire-release clients 16, raw spread, acquire p99 ms"));
  }

  @Test
  void theColdPhaseHasRowsOfItsOwnWithEachWindowAfterTheWarmOnes() {
    List<String> t = table(RUNS);
    assertEquals(
        List.of(
            "acquire-release clients 16, cold, raw spread, cycles/s",
            "900 session",
            "300",
            "0.33x (behind)"),
        row(t, "acquire-release clients 16, cold, raw spread, cycles/s"));
    assertEquals(
        List.of(
            "acquire-release clients 16, cold, raw spread, cycles/s in 0-5 s",
            "800 session",
            "100",
            "0.13x (behind)"),
        row(t, "acquire-release clients 16, cold, raw spread, cycles/s in 0-5 s"));
    assertEquals(
        List.of(
            "acquire-release clients 16, cold, raw spread, cycles/s in 10-15 s",
            "1,000 session",
            "500",
            "0.50x (behind)"),
        row(t, "acquire-release clients 16, cold, raw spread, cycles/s in 10-15 s"));
    int warm =
        t.indexOf(
            t.stream()
                .filter(l -> l.startsWith("acquire-release clients 16, raw spread, cycles/s  "))
                .findFirst()
                .orElseThrow());
    int cold =
        t.indexOf(
            t.stream()
                .filter(
                    l -> l.startsWith("acquire-release clients 16, cold, raw spread, cycles/s  "))
                .findFirst()
                .orElseThrow());
    assertTrue(warm < cold, String.join("\n", t));
    // Runs without windows have no window rows.
    assertTrue(
        t.stream()
            .noneMatch(l -> l.startsWith("acquire-release clients 16, raw spread, cycles/s in")),
        String.join("\n", t));
  }

  @Test
  void aRawRunInAnotherModeGetsARowNamedForIt() {
    List<JsonObject> runs = new ArrayList<>(RUNS);
    runs.add(run("leasehold-raw", 16, 1150, 20, ",\"mode\":\"leader\"", ""));
    List<String> t = table(runs);
    assertEquals(
        List.of(
            "acquire-release clients 16, raw leader, cycles/s",
            "1,000, 1,100 session",
            "1,150",
            "1.10x"),
        row(t, "acquire-release clients 16, raw leader, cycles/s"));
    assertEquals(
        "raw node", CompareTable.variant(run("leasehold-raw", 1, 1, 1, ",\"mode\":\"node\"", "")));
    assertEquals("", CompareTable.variant(run("leasehold", 1, 1, 1, "", "")));
  }

  @Test
  void anEtcdRunWithNoLeaseholdRunStillHasItsRow() {
    List<String> t = table(List.of(run("etcd-session", 64, 1600, 60, "", "")));
    assertEquals(
        List.of("acquire-release clients 64, cycles/s", "1,600 session", "-", "-"),
        row(t, "acquire-release clients 64, cycles/s"));
  }
}
