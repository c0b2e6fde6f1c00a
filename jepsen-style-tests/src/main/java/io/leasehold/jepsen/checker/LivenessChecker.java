package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.LivenessProbe;
import java.util.ArrayList;
import java.util.List;

/** Liveness: after the last heal, the cluster granted a free name within the stated bound. */
public final class LivenessChecker implements Checker {
  @Override
  public Verdict check(History h) {
    if (h.liveness().isEmpty()) {
      return Verdict.unknown("liveness", "no probe after the last heal");
    }
    List<String> problems = new ArrayList<>();
    StringBuilder took = new StringBuilder();
    for (LivenessProbe p : h.liveness()) {
      if (p.grantedNanos().isEmpty()) {
        problems.add(
            p.name() + " was not granted within " + p.boundNanos() / 1_000_000 + " ms of the heal");
        continue;
      }
      long ms = (p.grantedNanos().getAsLong() - p.healedNanos()) / 1_000_000;
      took.append(took.length() == 0 ? "" : ", ").append(ms).append(" ms");
      if (p.grantedNanos().getAsLong() - p.healedNanos() > p.boundNanos()) {
        problems.add(
            p.name()
                + " granted "
                + ms
                + " ms after the heal, over the bound of "
                + p.boundNanos() / 1_000_000
                + " ms");
      }
    }
    return Verdict.of(
        "liveness",
        problems,
        "free names granted after the last heal in "
            + took
            + " (bound "
            + h.liveness().get(0).boundNanos() / 1_000_000
            + " ms)");
  }
}
