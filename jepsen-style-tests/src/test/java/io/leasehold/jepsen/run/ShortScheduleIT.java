package io.leasehold.jepsen.run;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The short fault schedule of {@code mvn verify}: every nemesis this machine supports, once,
 * against three server processes with every workload running; then every checker.
 */
class ShortScheduleIT {
  @Test
  void everySupportedNemesisOnceAndEveryCheckerPasses() throws Exception {
    JepsenRun.Result r =
        JepsenRun.run(
            new JepsenRun.Config(
                "short",
                Runs.nodes(),
                Runs.jar(),
                Runs.reports(),
                Runs.seed(),
                Schedules::shortSchedule,
                Duration.ofSeconds(10),
                2));
    Runs.assertPassed(r);
  }
}
