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

/**
 * The schedules: the short ones of {@code mvn verify} (plaintext and mutual TLS) and the random
 * soak.
 */
public final class Schedules {
  /** One variant per kind is enough for the short run; the soak draws from all of them. */
  static final Set<String> SHORT =
      Set.of(
          "kill-leader",
          "pause-leader",
          "partition-isolate-leader",
          "partition-bridge",
          "clock-skew",
          "leader-churn",
          "client-delay",
          "membership",
          "group-members",
          "peer-delay-leader-follower");

  /**
   * The short run with mutual TLS: the faults that make members and clients reconnect — a killed
   * leader (new TLS connections to a restarted member), an isolated leader (members cut off and
   * rejoined) and a paused leader (connections kept across a freeze).
   */
  static final Set<String> MUTUAL_TLS =
      Set.of("kill-leader", "partition-isolate-leader", "pause-leader");

  private Schedules() {}

  /**
   * Every kind of nemesis once; pauses outlast the nodes' 1–1.5 s election timeout (the server
   * default) and the 3 s lease TTL.
   */
  public static Schedule shortSchedule(List<Nemesis> all) {
    return once(all, SHORT);
  }

  /** A kill, a partition and a pause, once each, for the cluster with mutual TLS. */
  public static Schedule mutualTlsSchedule(List<Nemesis> all) {
    return once(all, MUTUAL_TLS);
  }

  private static Schedule once(List<Nemesis> all, Set<String> names) {
    List<Step> steps = new ArrayList<>();
    for (Nemesis n : all) {
      if (!names.contains(n.name())) {
        continue;
      }
      Duration fault =
          switch (n.kind()) {
            case "pause" -> Duration.ofSeconds(5);
            case "leader-churn" -> Duration.ofSeconds(7);
            case "client-delay" -> Duration.ofSeconds(8);
            case "peer-delay" ->
                Duration.ofSeconds(
                    10); // long enough for held appends to time out (3 s) and be resent
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
      default ->
          throw new IllegalArgumentException(
              "jepsen.duration: expected e.g. 90s, 30m or 2h, got " + s);
    };
  }
}
