package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.run.Pacing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sequence of faults: each step starts a nemesis, holds the fault, heals it, then lets the
 * cluster run quietly. Nemeses this machine cannot run are recorded as skipped, with the reason.
 */
public final class Schedule {
  private static final Logger LOG = LoggerFactory.getLogger(Schedule.class);

  public record Step(Nemesis nemesis, Duration fault, Duration quiet) {}

  private final List<Step> steps;

  public Schedule(List<Step> steps) {
    this.steps = List.copyOf(steps);
  }

  public List<Step> steps() {
    return steps;
  }

  /** Every supported nemesis once, in the given order, with the fault durations given. */
  public static Schedule once(List<Step> steps) {
    return new Schedule(steps);
  }

  /**
   * Random steps drawn from {@code nemeses} until {@code total} has passed: faults of 3–10 s
   * (pauses at least {@code minPause}), quiet gaps of 2–6 s.
   */
  public static Schedule random(
      List<Nemesis> nemeses, Duration total, Duration minPause, Random random) {
    List<Nemesis> usable = nemeses.stream().filter(n -> n.unsupportedReason().isEmpty()).toList();
    List<Step> steps = new ArrayList<>();
    long left = total.toMillis();
    while (left > 0 && !usable.isEmpty()) {
      Nemesis n = usable.get(random.nextInt(usable.size()));
      long fault = 3000 + random.nextInt(7000);
      if (n.kind().equals("pause")) {
        fault = Math.max(fault, minPause.toMillis());
      }
      long quiet = 2000 + random.nextInt(4000);
      steps.add(new Step(n, Duration.ofMillis(fault), Duration.ofMillis(quiet)));
      left -= fault + quiet;
    }
    return new Schedule(steps);
  }

  /** Runs the steps until done or {@code stop} says so; always heals what it started. */
  public void run(NemesisContext ctx, List<Nemesis> all, Timeline timeline, BooleanSupplier stop) {
    for (Nemesis n : all) {
      n.unsupportedReason()
          .ifPresent(
              why -> {
                timeline.skipped(n, why);
                LOG.warn("nemesis {} SKIPPED on this machine: {}", n.name(), why);
              });
    }
    for (Step s : steps) {
      if (stop.getAsBoolean()) {
        return;
      }
      if (s.nemesis().unsupportedReason().isPresent()) {
        continue;
      }
      String started;
      try {
        started = s.nemesis().start(ctx);
      } catch (RuntimeException e) {
        started = "could not start: " + e.getMessage().lines().findFirst().orElse("");
        LOG.warn("nemesis {} {}", s.nemesis().name(), started);
        timeline.record(s.nemesis(), "failed", started);
        s.nemesis().heal(ctx);
        continue;
      }
      timeline.record(s.nemesis(), "start", started);
      LOG.info("nemesis {} start: {}", s.nemesis().name(), started);
      Pacing.sleep(s.fault());
      String healed = s.nemesis().heal(ctx);
      if (s.nemesis() instanceof LeaderChurnNemesis churn && churn.lastRunMoves() > 1) {
        // Every move after the first is a fault of its own.
        timeline.addFaults(s.nemesis().kind(), churn.lastRunMoves() - 1);
      }
      timeline.record(s.nemesis(), "heal", healed);
      LOG.info("nemesis {} heal: {}", s.nemesis().name(), healed);
      Pacing.sleep(s.quiet());
      // The next fault should hit a whole cluster: restarted nodes may take long to start on a
      // loaded machine.
      try {
        ctx.cluster().awaitAllUp(Duration.ofSeconds(90));
      } catch (IllegalStateException notYet) {
        LOG.warn("the cluster is not whole 90 s after healing {}; going on", s.nemesis().name());
      }
    }
  }
}
