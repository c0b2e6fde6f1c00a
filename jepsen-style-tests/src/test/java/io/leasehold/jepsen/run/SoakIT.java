package io.leasehold.jepsen.run;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The long soak of {@code -Pjepsen}: random faults from every nemesis for {@code -Djepsen.duration}
 * (default 10m).
 */
class SoakIT {
  @Test
  void randomFaultsFromEveryNemesisForTheWholeDurationAndEveryCheckerPasses() throws Exception {
    long seed = Runs.seed();
    Duration duration = Schedules.parse(System.getProperty("jepsen.duration", "10m"));
    JepsenRun.Result r =
        JepsenRun.run(
            new JepsenRun.Config(
                "soak",
                Runs.nodes(),
                Runs.jar(),
                Runs.reports(),
                seed,
                all -> Schedules.soak(all, duration, seed),
                Duration.ofSeconds(10),
                3));
    Runs.assertPassed(r);
  }
}
