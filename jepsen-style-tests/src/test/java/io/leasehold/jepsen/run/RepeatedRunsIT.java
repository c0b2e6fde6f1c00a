package io.leasehold.jepsen.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.jepsen.checker.Verdict;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The short schedule (or the mutual-TLS one, or the short one on nodes with three lease groups)
 * many times in a row, each with a fresh seed, and a table of every run: seed, every checker's
 * verdict, operations, duration. A schedule that passes once proves little; this is how a claim of
 * "N runs in a row" is made. {@code jepsen-style-tests/repeat.sh} runs it ({@code
 * -Pjepsen-repeat}); it goes on after a failed run, so the table shows them all, and fails at the
 * end if any run found a violation. The table is printed and written to {@code
 * target/jepsen/repeat-<schedule>.tsv}.
 */
class RepeatedRunsIT {
  @TempDir Path certs;

  @Test
  void everyRunOfTheScheduleHasEveryCheckerValid() throws Exception {
    int runs = Integer.getInteger("jepsen.repeat", 10);
    String schedule = System.getProperty("jepsen.repeat.schedule", "short");
    boolean tls =
        switch (schedule) {
          case "short", "groups", "moves", "subsets", "spread" -> false;
          case "tls" -> true;
          default ->
              throw new IllegalArgumentException(
                  "jepsen.repeat.schedule: short, tls, groups, moves, subsets or spread, got "
                      + schedule);
        };
    // groups: the short schedule on nodes with three lease groups (docs/design/multi-raft.md);
    // moves: the same, with namespaces moving between the lease groups throughout; subsets: moves
    // on five nodes with two lease groups of three, each node serving the group it is not a member
    // of through that group's members; spread: subsets with three lease groups of three, so that
    // no node is a member of every group and a watch of every name merges a stream per group.
    boolean spread = schedule.equals("spread");
    boolean subsets = schedule.equals("subsets") || spread;
    boolean moves = schedule.equals("moves") || subsets;
    int leaseGroups = subsets && !spread ? 2 : schedule.equals("groups") || moves ? 3 : 1;
    int nodes = subsets ? 5 : Runs.nodes();
    int leaseGroupSize = subsets ? 3 : 0;
    Random seeds = new Random(Long.getLong("jepsen.seed", System.nanoTime()));
    Path table = Runs.reports().resolve("repeat-" + schedule + ".tsv");
    Files.createDirectories(table.getParent());
    List<String> failed = new ArrayList<>();
    List<String> checkers = null;
    for (int i = 1; i <= runs; i++) {
      long seed = seeds.nextLong() & Long.MAX_VALUE;
      long started = System.nanoTime();
      Optional<io.leasehold.jepsen.cluster.Certificates> certificates =
          tls
              ? Optional.of(
                  new TestCertificates(Files.createDirectories(certs.resolve("run-" + i))))
              : Optional.empty();
      JepsenRun.Result r;
      try {
        r =
            JepsenRun.run(
                new JepsenRun.Config(
                    schedule,
                    nodes,
                    Runs.jar(),
                    Runs.reports(),
                    seed,
                    tls ? Schedules::mutualTlsSchedule : Schedules::shortSchedule,
                    Duration.ofSeconds(10),
                    2,
                    certificates,
                    leaseGroups,
                    moves,
                    leaseGroupSize));
      } catch (Exception e) {
        String line = String.format(Locale.ROOT, "%d\t%d\tRUN FAILED: %s", i, seed, e);
        System.out.println(line);
        append(table, line);
        failed.add(line);
        continue;
      }
      long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();
      if (checkers == null) {
        checkers = r.verdicts().stream().map(Verdict::checker).toList();
        String header = "run\tseed\t" + String.join("\t", checkers) + "\tops\tseconds\treport";
        System.out.println(header);
        Files.writeString(table, header + "\n");
      }
      String line =
          i
              + "\t"
              + seed
              + "\t"
              + r.verdicts().stream().map(v -> v.result().name()).collect(Collectors.joining("\t"))
              + "\t"
              + r.history().ops().size()
              + "\t"
              + seconds
              + "\t"
              + r.report().toAbsolutePath();
      System.out.println(line);
      append(table, line);
      if (!r.valid()) {
        failed.add(
            line
                + "\n"
                + r.verdicts().stream()
                    .filter(Verdict::failed)
                    .map(Verdict::toString)
                    .collect(Collectors.joining("\n")));
      }
    }
    System.out.println(
        runs
            - failed.size()
            + " of "
            + runs
            + " runs of the "
            + schedule
            + " schedule had every checker VALID; table "
            + table.toAbsolutePath());
    assertEquals(List.of(), failed, "runs with a violation");
  }

  private static void append(Path table, String line) {
    try {
      Files.writeString(table, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
