package io.leasehold.jepsen.run;

import io.leasehold.jepsen.nemesis.Nemesis;
import io.leasehold.jepsen.nemesis.Schedule;
import io.leasehold.jepsen.nemesis.Schedule.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

/** The two schedules: the short one of {@code mvn verify} and the random soak. */
public final class Schedules {
  /** One variant per kind is enough for the short run; the soak draws from all of them. */
  static final Set<String> SHORT = Set.of("kill-leader", "pause-leader", "partition-isolate-leader", "partition-bridge", "clock-skew",
      "leader-churn", "client-delay", "membership");

  private Schedules() {}

  /** Every kind of nemesis once; pauses outlast the nodes' 1–1.5 s election timeout (the server default) and the 3 s lease TTL. */
  public static Schedule shortSchedule(List<Nemesis> all) {
    List<Step> steps = new ArrayList<>();
    for (Nemesis n : all) {
      if (!SHORT.contains(n.name())) {
        continue;
      }
      Duration fault = switch (n.kind()) {
        case "pause" -> Duration.ofSeconds(5);
        case "leader-churn" -> Duration.ofSeconds(7);
        case "client-delay" -> Duration.ofSeconds(8);
        default -> Duration.ofSeconds(5);
      };
      steps.add(new Step(n, fault, Duration.ofSeconds(3)));
    }
    return Schedule.once(steps);
  }

  public static Schedule soak(List<Nemesis> all, Duration total, long seed) {
    return Schedule.random(all, total, Duration.ofSeconds(5), new Random(seed));
  }

  /** "90s", "30m", "2h", or an ISO-8601 duration. */
  public static Duration parse(String s) {
    String t = s.trim().toLowerCase(Locale.ROOT);
    if (t.startsWith("p")) {
      return Duration.parse(t.toUpperCase(Locale.ROOT));
    }
    long n = Long.parseLong(t.substring(0, t.length() - 1));
    return switch (t.charAt(t.length() - 1)) {
      case 's' -> Duration.ofSeconds(n);
      case 'm' -> Duration.ofMinutes(n);
      case 'h' -> Duration.ofHours(n);
      default -> throw new IllegalArgumentException("jepsen.duration: expected e.g. 90s, 30m or 2h, got " + s);
    };
  }
}
