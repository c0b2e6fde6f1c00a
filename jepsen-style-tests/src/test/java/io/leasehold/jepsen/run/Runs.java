package io.leasehold.jepsen.run;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.checker.Verdict;
import io.leasehold.jepsen.nemesis.Nemesis;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/** What the fault-test ITs share: where the jar and reports are, and how a run is judged. */
final class Runs {
  private Runs() {}

  static Path jar() {
    return Path.of(System.getProperty("leasehold.jar", "../cli/target/leasehold.jar"));
  }

  static Path reports() {
    return Path.of(System.getProperty("jepsen.reports", "target/jepsen"));
  }

  static int nodes() {
    return Integer.parseInt(System.getProperty("jepsen.nodes", "3"));
  }

  static long seed() {
    return Long.getLong("jepsen.seed", System.currentTimeMillis());
  }

  /**
   * Fails with the verdicts and the report's path if any checker found a violation or a supported
   * nemesis never ran.
   */
  static void assertPassed(JepsenRun.Result r) {
    String verdicts =
        r.verdicts().stream().map(Verdict::toString).collect(Collectors.joining("\n"));
    assertTrue(
        r.valid(), "violations found; report: " + r.report().toAbsolutePath() + "\n" + verdicts);
    List<String> neverRan =
        r.nemeses().stream()
            .filter(n -> n.unsupportedReason().isEmpty())
            .map(Nemesis::kind)
            .distinct()
            .filter(k -> r.faults().getOrDefault(k, 0) == 0)
            .toList();
    assertTrue(
        neverRan.isEmpty(),
        "supported nemeses that injected no fault: "
            + neverRan
            + "; report "
            + r.report().toAbsolutePath());
    System.out.println(
        "fault test passed; faults "
            + r.faults()
            + "; skipped "
            + r.skipped()
            + "; report "
            + r.report().toAbsolutePath()
            + "\n"
            + verdicts);
  }
}
