package io.leasehold.jepsen.run;

import io.leasehold.jepsen.nemesis.Schedule;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The long soak of {@code -Pjepsen}: random faults from every nemesis for {@code -Djepsen.duration} (default 10m). */
class SoakIT {
  @Test
  void randomFaultsFromEveryNemesisForTheWholeDurationAndEveryCheckerPasses() throws Exception {
    long seed = Runs.seed();
    Duration duration = Runs.duration(System.getProperty("jepsen.duration", "10m"));
    JepsenRun.Result r = JepsenRun.run(new JepsenRun.Config("soak", Runs.nodes(), Runs.jar(), Runs.reports(), seed,
        all -> Schedule.random(all, duration, Duration.ofSeconds(5), new Random(seed)), Duration.ofSeconds(10), 3));
    Runs.assertPassed(r);
  }
}
