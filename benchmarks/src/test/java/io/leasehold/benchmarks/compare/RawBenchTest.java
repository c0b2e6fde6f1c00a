package io.leasehold.benchmarks.compare;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.Status;
import io.leasehold.benchmarks.Dirs;
import io.leasehold.cli.Json;
import io.leasehold.cli.bench.AcquireRelease;
import io.leasehold.cli.bench.BenchReport;
import io.leasehold.cli.bench.NodeStats;
import io.leasehold.cli.bench.Progress;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.NodeConfig;
import io.leasehold.server.Peer;
import io.leasehold.server.TestCluster;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** RawBench's options, how bad ones are refused, and a short run against a node in this JVM. */
class RawBenchTest {
  /**
   * The acquire-release command as parsed from {@code args} (global options first), before it runs.
   */
  private static RawBench.AcquireReleaseRun parse(String... args) {
    CommandLine.ParseResult r = new CommandLine(new RawBench()).parseArgs(args);
    return (RawBench.AcquireReleaseRun) r.subcommand().commandSpec().userObject();
  }

  private static String refusal(String... args) {
    RawBench.AcquireReleaseRun run = parse(args);
    return assertThrows(CommandLine.ParameterException.class, run::plan).getMessage();
  }

  /** Runs the command as main does; returns the exit code, stdout and stderr. */
  private static String[] execute(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = new CommandLine(new RawBench());
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int code = cl.execute(args);
    return new String[] {Integer.toString(code), out.toString(), err.toString()};
  }

  @Test
  void byDefaultTheWorkersAreSpreadOverEveryEndpointWithMetricsAtPortPlusTwo() {
    RawBench.AcquireReleaseRun.Plan p =
        parse("--endpoints", "127.0.0.1:7600, 127.0.0.1:7610,127.0.0.1:7620", "acquire-release")
            .plan();
    assertEquals(RawBench.Mode.SPREAD, p.mode());
    assertEquals(List.of("127.0.0.1:7600", "127.0.0.1:7610", "127.0.0.1:7620"), p.endpoints());
    assertEquals(List.of("127.0.0.1:7602", "127.0.0.1:7612", "127.0.0.1:7622"), p.metrics());
    RawBench.AcquireReleaseRun run = parse("acquire-release");
    assertEquals(16, run.clients);
    assertEquals(Duration.ofSeconds(30), run.ttl);
    assertEquals(Duration.ofSeconds(10), run.deadline);
    assertEquals(null, run.window);
  }

  @Test
  void theModesAreSpreadNodeAndLeader() {
    assertEquals(RawBench.Mode.SPREAD, parse("acquire-release", "--spread").plan().mode());
    assertEquals(
        RawBench.Mode.NODE, parse("acquire-release", "--node", "127.0.0.1:7410").plan().mode());
    assertEquals(RawBench.Mode.LEADER, parse("acquire-release", "--leader-only").plan().mode());
    assertEquals(List.of(), parse("acquire-release", "--metrics", "off").plan().metrics());
  }

  @Test
  void badInputIsRefusedNamingTheOptionAndTheRule() {
    assertEquals(
        "--spread, --node and --leader-only: give at most one",
        refusal("acquire-release", "--spread", "--leader-only"));
    assertEquals(
        "--spread, --node and --leader-only: give at most one",
        refusal("acquire-release", "--node", "h:1", "--leader-only"));
    assertEquals(
        "--node: 'nohost' is not host:port", refusal("acquire-release", "--node", "nohost"));
    assertEquals(
        "--endpoints: 'a' is not host:port",
        refusal("--endpoints", "127.0.0.1:7400,a", "acquire-release"));
    assertEquals(
        "--clients: must be at least 1, got 0", refusal("acquire-release", "--clients", "0"));
    assertEquals("--duration: must be positive", refusal("acquire-release", "--duration", "0s"));
    assertEquals("--windows: must be positive", refusal("acquire-release", "--windows", "0s"));
    assertEquals(
        "--windows: must be no longer than --duration (5s), got 10s",
        refusal("acquire-release", "--duration", "5s", "--windows", "10s"));
    assertEquals("--ttl: must be positive", refusal("acquire-release", "--ttl", "0s"));
    assertEquals("--deadline: must be positive", refusal("acquire-release", "--deadline", "0ms"));
    assertEquals(
        "--names: worker or fresh, got 'many'", refusal("acquire-release", "--names", "many"));
    assertEquals(
        "--metrics: 'x' is not host:port (or 'off')", refusal("acquire-release", "--metrics", "x"));
    assertEquals("--output: json or table, got 'xml'", refusal("-o", "xml", "acquire-release"));
  }

  @Test
  void refusalsEndTheRunWithUsageAndExitCode2BeforeAnyConnection() {
    String[] r = execute("--endpoints", "127.0.0.1:1", "acquire-release", "--clients", "-3");
    assertEquals("2", r[0]);
    assertTrue(r[2].contains("--clients: must be at least 1, got -3"), r[2]);
    String[] duration = execute("acquire-release", "--duration", "soon");
    assertEquals("2", duration[0]);
    assertTrue(duration[2].contains("'soon' is not a duration"), duration[2]);
    String[] none = execute();
    assertEquals("2", none[0]);
    assertTrue(none[2].contains("a workload is required"), none[2]);
  }

  @Test
  void aShortRunAgainstANodeInThisJvmCompletesCyclesWithoutErrors() throws Exception {
    Path dir = Files.createTempDirectory("rawbench-");
    int[] ports = TestCluster.freePorts(2);
    Peer peer = new Peer("n1", "127.0.0.1", ports[0], ports[1]);
    LeaseholdNode node =
        LeaseholdNode.start(
            NodeConfig.builder().id("n1").peers(List.of(peer)).dataDir(dir.resolve("n1")).build());
    try {
      TestCluster.await(
          "a ready leader",
          Duration.ofSeconds(60),
          () -> node.isLeader() && node.diagnostics().ticker().scheduler().isActive());
      String endpoint = peer.clientAddress();

      String[] spread =
          execute(
              "--endpoints",
              endpoint,
              "acquire-release",
              "--clients",
              "4",
              "--warmup",
              "0s",
              "--duration",
              "2s",
              "--windows",
              "1s",
              "--metrics",
              "off");
      assertEquals("0", spread[0], spread[2]);
      JsonObject json = JsonParser.parseString(spread[1].trim()).getAsJsonObject();
      assertEquals("acquire-release", json.get("workload").getAsString());
      assertEquals(RawBench.SYSTEM, json.get("system").getAsString());
      JsonObject settings = json.getAsJsonObject("settings");
      assertEquals("spread", settings.get("mode").getAsString());
      assertEquals(4, settings.get("clients").getAsInt());
      JsonObject results = json.getAsJsonObject("results");
      assertTrue(results.get("cycles_per_s").getAsDouble() > 0, results.toString());
      assertEquals(0, results.get("errors").getAsLong(), results.toString());
      assertEquals(0, results.get("failed").getAsLong(), results.toString());
      assertTrue(
          results.getAsJsonObject("acquire").get("count").getAsLong() > 0, results.toString());
      JsonArray windows = results.getAsJsonArray("windows");
      assertEquals(2, windows.size());
      long inWindows = 0;
      for (int i = 0; i < windows.size(); i++) {
        JsonObject w = windows.get(i).getAsJsonObject();
        assertEquals(i, w.get("from_s").getAsDouble());
        assertEquals(i + 1, w.get("to_s").getAsDouble());
        inWindows += w.get("cycles").getAsLong();
      }
      assertTrue(inWindows > 0, windows.toString());
      // The windows count the cycles the load loop counts (started in the measured period, ended in
      // it).
      long cycles = Math.round(results.get("cycles_per_s").getAsDouble() * 2);
      assertTrue(
          Math.abs(inWindows - cycles) <= Math.max(2, cycles / 50),
          inWindows + " in the windows, " + cycles + " in all");

      String[] leader =
          execute(
              "--endpoints",
              endpoint,
              "acquire-release",
              "--leader-only",
              "--clients",
              "2",
              "--warmup",
              "0s",
              "--duration",
              "1s",
              "--names",
              "fresh",
              "--metrics",
              "off");
      assertEquals("0", leader[0], leader[2]);
      JsonObject l = JsonParser.parseString(leader[1].trim()).getAsJsonObject();
      assertEquals("leader", l.getAsJsonObject("settings").get("mode").getAsString());
      assertEquals(
          endpoint, l.getAsJsonObject("settings").getAsJsonArray("nodes").get(0).getAsString());
      assertEquals(0, l.getAsJsonObject("results").get("errors").getAsLong(), leader[1]);
      assertTrue(l.getAsJsonObject("results").get("cycles_per_s").getAsDouble() > 0, leader[1]);
    } finally {
      node.close();
      Dirs.deleteRecursively(dir);
    }
  }

  @Test
  void failuresAreCountedByStatusCodeOrRefusal() {
    assertEquals(
        "UNAVAILABLE",
        TalliedTarget.kind(
            new CompletionException(
                Status.UNAVAILABLE.withDescription("no leader").asRuntimeException())));
    assertEquals(
        "DEADLINE_EXCEEDED",
        TalliedTarget.kind(
            new RuntimeException("wrapped", Status.DEADLINE_EXCEEDED.asException())));
    assertEquals(
        "CONFLICT",
        TalliedTarget.kind(new TalliedTarget.Refused("CONFLICT", "acquire x: CONFLICT")));
    assertEquals("IllegalStateException", TalliedTarget.kind(new IllegalStateException("?")));
  }

  @Test
  void aFailedCallIsCountedByItsCodeAndTheWorkerBacksOffBeforeItsNextCycle() throws Exception {
    AcquireRelease.Target<String> unavailable =
        new AcquireRelease.Target<>() {
          @Override
          public CompletableFuture<String> acquire(int worker, String name) {
            return CompletableFuture.failedFuture(
                Status.UNAVAILABLE.withDescription("no leader").asRuntimeException());
          }

          @Override
          public CompletableFuture<Void> release(int worker, String held) {
            return CompletableFuture.completedFuture(null);
          }
        };
    Duration duration = Duration.ofSeconds(1);
    TalliedTarget<String> target =
        new TalliedTarget<>(unavailable, Duration.ofMillis(500), Duration.ofMillis(100))
            .start(duration);
    ExecutorService trampoline = Executors.newSingleThreadExecutor();
    try {
      BenchReport report =
          AcquireRelease.run(
              "test",
              target,
              new AcquireRelease.Settings(
                  2, Duration.ZERO, duration, OptionalDouble.empty(), "bench/"),
              new NodeStats(List.of()),
              trampoline,
              Progress.off());
      target.addTo(report);
      JsonObject results =
          JsonParser.parseString(Json.compact(report.json()))
              .getAsJsonObject()
              .getAsJsonObject("results");
      long errors = results.get("errors").getAsLong();
      // Two workers, each waiting 100 ms after every failure: about 20 in a second, not thousands.
      assertTrue(errors >= 2 && errors <= 30, results.toString());
      assertEquals(
          errors,
          results.getAsJsonObject("errors_by_code").get("UNAVAILABLE").getAsLong(),
          results.toString());
      assertEquals(0, results.get("cycles_per_s").getAsDouble());
      JsonArray windows = results.getAsJsonArray("windows");
      assertEquals(2, windows.size());
      assertEquals(
          errors,
          windows.get(0).getAsJsonObject().get("errors").getAsLong()
              + windows.get(1).getAsJsonObject().get("errors").getAsLong());
    } finally {
      trampoline.shutdownNow();
    }
  }
}
