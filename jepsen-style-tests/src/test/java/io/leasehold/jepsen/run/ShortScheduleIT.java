package io.leasehold.jepsen.run;

import io.leasehold.jepsen.nemesis.Nemesis;
import io.leasehold.jepsen.nemesis.Schedule;
import io.leasehold.jepsen.nemesis.Schedule.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The short fault schedule of {@code mvn verify}: every nemesis this machine supports, once,
 * against three server processes with every workload running; then every checker.
 */
class ShortScheduleIT {
  /** One variant per kind is enough here; the soak draws from all of them. */
  static final Set<String> SHORT = Set.of("kill-leader", "pause-leader", "partition-isolate-leader", "partition-bridge", "clock-skew",
      "leader-churn", "client-delay", "membership");

  @Test
  void everySupportedNemesisOnceAndEveryCheckerPasses() throws Exception {
    long seed = Runs.seed();
    JepsenRun.Result r = JepsenRun.run(new JepsenRun.Config("short", Runs.nodes(), Runs.jar(), Runs.reports(), seed,
        ShortScheduleIT::schedule, Duration.ofSeconds(10), 2));
    Runs.assertPassed(r);
  }

  static Schedule schedule(List<Nemesis> all) {
    List<Step> steps = new ArrayList<>();
    for (Nemesis n : all) {
      if (!SHORT.contains(n.name())) {
        continue;
      }
      Duration fault = switch (n.kind()) {
        case "pause" -> Duration.ofSeconds(5); // longer than the 2 s election timeout and the 3 s lease TTL
        case "leader-churn" -> Duration.ofSeconds(7);
        case "client-delay" -> Duration.ofSeconds(8);
        default -> Duration.ofSeconds(5);
      };
      steps.add(new Step(n, fault, Duration.ofSeconds(3)));
    }
    return Schedule.once(steps);
  }
}
