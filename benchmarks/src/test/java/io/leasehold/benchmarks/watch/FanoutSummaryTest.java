package io.leasehold.benchmarks.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.proto.v1.EventView;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fan-out summary's arithmetic and the options that shape the phases, without a cluster. */
class FanoutSummaryTest {
  private static final EventView BASIC = EventView.EVENT_VIEW_BASIC;
  private static final EventView FULL = EventView.EVENT_VIEW_FULL;

  private static FanoutBenchmark.Phase phase(
      double throughput, int watchers, int complete, double markingCores) {
    // The cluster spends 500 µs an acquisition; watchers add 150 µs an event, their clients 70 µs.
    double cluster = throughput * (watchers > 0 ? 650e-6 : 500e-6);
    double clients = watchers > 0 ? throughput * 70e-6 : 0;
    return phase(
        throughput,
        watchers,
        complete,
        markingCores,
        new FanoutBenchmark.Cpu(cluster + 0.1 + clients, 0.1, clients, true));
  }

  private static FanoutBenchmark.Phase phase(
      double throughput, int watchers, int complete, double markingCores, FanoutBenchmark.Cpu cpu) {
    return new FanoutBenchmark.Phase(
        "p",
        watchers,
        throughput,
        1000,
        0,
        0,
        Stats.nanosHistogram(),
        complete,
        0,
        0,
        10,
        true,
        0.01,
        markingCores,
        cpu);
  }

  /** Phases: none, then per view in {@code views} a watched phase and none again. */
  private static FanoutBenchmark.Result result(
      List<EventView> views, double[] throughputs, int incompleteAt) {
    return result(views, throughputs, incompleteAt, -1);
  }

  /** The same, with G1's concurrent marking in phase {@code markedAt} (-1: none). */
  private static FanoutBenchmark.Result result(
      List<EventView> views, double[] throughputs, int incompleteAt, int markedAt) {
    List<FanoutBenchmark.Phase> phases = new ArrayList<>();
    for (int i = 0; i < throughputs.length; i++) {
      boolean watched = i % 2 == 1;
      phases.add(
          phase(
              throughputs[i],
              watched ? 1000 : 0,
              watched && i != incompleteAt ? 1000 : 0,
              i == markedAt ? 0.4 : 0.01));
    }
    return new FanoutBenchmark.Result(phases, views, 1000, "in this JVM", true, false);
  }

  private static Options options(String... args) {
    return Options.parse(args);
  }

  @Test
  void repeatsInterleaveTheViewsInTheirOrder() {
    assertEquals(
        List.of(FULL, BASIC, FULL, BASIC, FULL, BASIC),
        options("fanout", "--views=full,basic", "--repeats=3").phaseViews());
    assertEquals(List.of(BASIC), options("fanout", "--views=basic", "--repeats=1").phaseViews());
    assertEquals(5, options("fanout").repeats, "the default pools five watched phases per view");
  }

  @Test
  void badPhaseOptionsAreRefusedNamingTheOption() {
    IllegalArgumentException repeats =
        assertThrows(IllegalArgumentException.class, () -> options("fanout", "--repeats=0"));
    assertTrue(repeats.getMessage().contains("--repeats"), repeats.getMessage());
    IllegalArgumentException loop =
        assertThrows(IllegalArgumentException.class, () -> options("fanout", "--writer-loop=both"));
    assertEquals("--writer-loop: must be own or shared, got 'both'", loop.getMessage());
    assertTrue(options("fanout", "--writer-loop=shared").writerSharesWatchersLoop);
    assertTrue(
        !options("fanout").writerSharesWatchersLoop, "the load has its own event loop by default");
    IllegalArgumentException where =
        assertThrows(
            IllegalArgumentException.class, () -> options("fanout", "--watchers-in=elsewhere"));
    assertEquals(
        "--watchers-in: must be jvm, process, idle-process or capped-process, got 'elsewhere'",
        where.getMessage());
    assertEquals(
        Options.WatchersIn.IDLE_PROCESS,
        options("fanout", "--watchers-in=idle-process").watchersIn);
    assertEquals(
        Options.WatchersIn.JVM,
        options("fanout").watchersIn,
        "the watchers share the measured JVM by default");
    Options capped = options("fanout", "--watchers-in=capped-process", "--watcher-cores=0.4");
    assertEquals(Options.WatchersIn.CAPPED_PROCESS, capped.watchersIn);
    assertEquals(0.4, capped.watcherCores);
    assertTrue(
        capped.describe().contains("watchers-in=capped-process watcher-cores=0.4"),
        capped.describe());
    assertEquals(
        0.5,
        options("fanout", "--watchers-in=capped-process").watcherCores,
        "half a core by default");
    IllegalArgumentException cores =
        assertThrows(
            IllegalArgumentException.class,
            () -> options("fanout", "--watchers-in=capped-process", "--watcher-cores=0"));
    assertEquals("--watcher-cores must be positive, got 0.0", cores.getMessage());
    IllegalArgumentException uncapped =
        assertThrows(
            IllegalArgumentException.class,
            () -> options("fanout", "--watcher-cores=0.5", "--watchers-in=process"));
    assertEquals(
        "--watcher-cores: only with --watchers-in=capped-process, got --watchers-in=process",
        uncapped.getMessage());
  }

  @Test
  void theSummarySaysWhereTheWatchersRan() {
    FanoutBenchmark.Result r = result(List.of(BASIC), new double[] {1000, 850, 1100}, -1);
    FanoutBenchmark.Result elsewhere =
        new FanoutBenchmark.Result(
            r.phases(), r.views(), 1000, "in a child process at idle priority", true, false);
    assertTrue(
        WatchBenchmark.summary(options("fanout"), null, r)
            .get(0)
            .endsWith("(watchers in this JVM):"));
    assertEquals(
        "(B) 1000 watchers on one node get every event, throughput drop <= 20%, per event view "
            + "(watchers in a child process at idle priority):",
        WatchBenchmark.summary(options("fanout"), null, elsewhere).get(0));
  }

  @Test
  void aViewWatchedOnceIsJudgedOnItsOnePair() {
    // none 1000, watched 850, none 1100: baseline 1050, ratio 0.810
    List<String> lines =
        WatchBenchmark.summary(
            options("fanout"), null, result(List.of(BASIC), new double[] {1000, 850, 1100}, -1));
    assertTrue(lines.get(1).equals("  basic view: MET"), lines.toString());
    assertTrue(lines.get(2).contains("ratio 0.810"), lines.toString());
  }

  @Test
  void aRepeatedViewIsJudgedOnItsPooledRatioNotOnItsBestOrWorstPhase() {
    // basic, basic, basic: pairs (1000, 900, 1000) -> 0.900; (1000, 500, 1000) -> 0.500; (1000,
    // 1000, 1000) -> 1.000.
    // Pooled: mean watched 800 over mean baseline 1000 = 0.800, which meets 0.8; two of three
    // phases alone would too.
    List<EventView> views = List.of(BASIC, BASIC, BASIC);
    double[] t = {1000, 900, 1000, 500, 1000, 1000, 1000};
    List<String> lines = WatchBenchmark.summary(options("fanout"), null, result(views, t, -1));
    String all = String.join("\n", lines);
    assertTrue(all.contains("basic view, pooled over its 3 watched phases: MET"), all);
    assertTrue(
        all.contains(
            "mean throughput 800/s with 1000 watchers vs 1000/s without: ratio 0.800 (drop 20.0%) -> within target"),
        all);
    assertTrue(all.contains("in order: 0.900 0.500 1.000; median 0.900, 1 of 3 below 0.80"), all);

    // The same, one phase a little slower: pooled 0.797 is not met, whatever the median says.
    t[3] = 490;
    all = String.join("\n", WatchBenchmark.summary(options("fanout"), null, result(views, t, -1)));
    assertTrue(all.contains("basic view, pooled over its 3 watched phases: NOT MET"), all);
    assertTrue(all.contains("ratio 0.797"), all);
  }

  @Test
  void phasesBesideAConcurrentMarkAreStarredAndThePooledRatioIsAlsoGivenWithoutThem() {
    // basic x3: (1000, 900, 1000) -> 0.900; (1000, 850, 600 marked) -> 1.063; (600 marked, 700,
    // 1000) -> 0.875.
    // Pooled over all: 816.7 / 866.7 = 0.942; without the two beside phase 4: 900 / 1000 = 0.900.
    List<EventView> views = List.of(BASIC, BASIC, BASIC);
    double[] t = {1000, 900, 1000, 850, 600, 700, 1000};
    String all =
        String.join("\n", WatchBenchmark.summary(options("fanout"), null, result(views, t, -1, 4)));
    assertTrue(all.contains("ratio 0.942 (drop 5.8%) -> within target"), all);
    assertTrue(all.contains("in order: 0.900 1.063* 0.875*;"), all);
    assertTrue(all.contains("without them: ratio 0.900 (1 of 3 watched phases)"), all);

    String clean =
        String.join(
            "\n", WatchBenchmark.summary(options("fanout"), null, result(views, t, -1, -1)));
    assertTrue(
        clean.contains("in order: 0.900 1.063 0.875;") && !clean.contains("concurrent marking"),
        clean);
  }

  @Test
  void theCpuPerEventSplitsWhatTheWatchersCostTheServerFromWhatTheirClientsCost() {
    // Phases built at 500 µs an acquisition, +150 µs an event on the server, 70 µs in the clients:
    // predicted 500 / 720 = 0.694, and 0.8 would allow 125 µs.
    String all =
        String.join(
            "\n",
            WatchBenchmark.summary(
                options("fanout"),
                null,
                result(List.of(BASIC, BASIC), new double[] {1000, 800, 1200, 700, 900}, -1)));
    assertTrue(
        all.contains(
            "the cluster spends 500 µs an acquisition without watchers; the 1000 watchers add 150 µs on the server "
                + "(150 to 150) and 70 µs in their own clients: 500 / (500 + 150 + 70) = 0.694; for 0.80 they may add 125 µs in all"),
        all);

    // Clients in another process: their cores are not the cluster's, and are still reported.
    List<FanoutBenchmark.Phase> phases =
        List.of(
            phase(1000, 0, 0, 0.01, new FanoutBenchmark.Cpu(0.6, 0.1, 0, false)),
            phase(
                800,
                1000,
                1000,
                0.01,
                new FanoutBenchmark.Cpu(0.8 * 0.65 + 0.1, 0.1, 0.8 * 0.07, false)),
            phase(1000, 0, 0, 0.01, new FanoutBenchmark.Cpu(0.6, 0.1, 0, false)));
    String elsewhere =
        String.join(
            "\n",
            WatchBenchmark.summary(
                options("fanout"),
                null,
                new FanoutBenchmark.Result(
                    phases, List.of(BASIC), 1000, "in a child process", true, false)));
    assertTrue(
        elsewhere.contains("add 150 µs on the server (150 to 150) and 70 µs in their own clients"),
        elsewhere);
    // ... and on cores of their own (--watchers-in=capped-process): the prediction leaves the
    // clients out.
    String ownCores =
        String.join(
            "\n",
            WatchBenchmark.summary(
                options("fanout"),
                null,
                new FanoutBenchmark.Result(
                    phases,
                    List.of(BASIC),
                    1000,
                    "in a child process with 0.50 cores of its own",
                    true,
                    true)));
    assertTrue(
        ownCores.contains(
            "add 150 µs on the server (150 to 150) and 70 µs in their own clients: 500 / (500 + 150) = 0.769 "
                + "(the clients on cores of their own); for 0.80 the server may add 125 µs"),
        ownCores);
    assertTrue(
        elsewhere.contains("500 / (500 + 150 + 70) = 0.694"),
        "sharing the cores, the clients count: " + elsewhere);

    // The load on the watchers' loops: nothing to split, and the summary says so.
    List<FanoutBenchmark.Phase> shared =
        List.of(
            phase(1000, 0, 0, 0.01, FanoutBenchmark.Cpu.UNKNOWN),
            phase(800, 1000, 1000, 0.01, FanoutBenchmark.Cpu.UNKNOWN),
            phase(1000, 0, 0, 0.01, FanoutBenchmark.Cpu.UNKNOWN));
    String unknown =
        String.join(
            "\n",
            WatchBenchmark.summary(
                options("fanout"),
                null,
                new FanoutBenchmark.Result(
                    shared, List.of(BASIC), 1000, "in this JVM", true, false)));
    assertTrue(unknown.contains("CPU per event not known") && !unknown.contains("µs"), unknown);
  }

  @Test
  void aPooledVerdictNeedsEveryWatcherToHaveSeenEveryEventInEveryPhase() {
    List<EventView> views = List.of(FULL, BASIC, FULL, BASIC);
    double[] t = {1000, 950, 1000, 950, 1000, 950, 1000, 950, 1000};
    String all =
        String.join("\n", WatchBenchmark.summary(options("fanout"), null, result(views, t, 7)));
    assertTrue(all.contains("full view, pooled over its 2 watched phases: MET"), all);
    assertTrue(all.contains("basic view, pooled over its 2 watched phases: NOT MET"), all);
    assertTrue(all.contains("in 1 of 2 phases NOT every watcher saw every acquisition"), all);
  }
}
