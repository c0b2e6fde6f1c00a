package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.FinalState;
import io.leasehold.jepsen.history.History;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Durability: after every fault healed and every node restarted, each acknowledged grant is still
 * known (the live lease, or an ended lease in the name's history), each acknowledged release ended
 * its lease with reason RELEASED, and each namespace's policy is at least the last acknowledged
 * write (a later write that was not acknowledged may also have landed).
 */
public final class DurabilityChecker implements Checker {
  @Override
  public Verdict check(History h) {
    FinalState fin = h.finalState();
    if (!fin.read()) {
      return Verdict.unknown("durability", "no final state was read");
    }
    List<String> problems = new ArrayList<>();
    int grants = 0;
    int releases = 0;
    Map<String, Long> lastAckedPolicy = new TreeMap<>();
    for (Completed c : h.completed()) {
      String name = c.invoke().key();
      if (Grants.isGrant(c) && fin.current().containsKey(name)) {
        grants++;
        long t = Grants.token(c);
        boolean live = fin.current().get(name).map(l -> l.token() == t).orElse(false);
        boolean ended =
            fin.ended().getOrDefault(name, List.of()).stream().anyMatch(e -> e.token() == t);
        if (!live && !ended) {
          problems.add(
              "acknowledged grant lost: "
                  + c.completion()
                  + " is neither the live lease of "
                  + name
                  + " ("
                  + fin.current().get(name).map(Object::toString).orElse("none")
                  + ") nor in its history");
        }
      } else if (c.ok()
          && c.invoke().f().equals("release")
          && c.completion().value().equals("RELEASED")
          && fin.current().containsKey(name)) {
        releases++;
        long t = c.invoke().token().orElseThrow();
        Optional<FinalState.Held> now = fin.current().get(name);
        boolean released =
            fin.ended().getOrDefault(name, List.of()).stream()
                .anyMatch(e -> e.token() == t && e.reason().endsWith("RELEASED"));
        if (now.map(l -> l.token() == t).orElse(false) || !released) {
          problems.add(
              "acknowledged release lost: "
                  + c.completion()
                  + " (token "
                  + t
                  + "); now "
                  + now.map(Object::toString).orElse("none")
                  + ", history has it as released: "
                  + released);
        }
      } else if (c.ok() && c.invoke().f().equals("set-policy")) {
        lastAckedPolicy.merge(name, Long.parseLong(c.completion().value()), Math::max);
      }
    }
    for (Map.Entry<String, Long> e : lastAckedPolicy.entrySet()) {
      Long now = fin.policyValues().get(e.getKey());
      if (now == null || now < e.getValue()) {
        problems.add(
            "acknowledged policy change lost: namespace "
                + e.getKey()
                + " acknowledged value "
                + e.getValue()
                + ", now "
                + now);
      }
    }
    return Verdict.of(
        "durability",
        problems,
        grants
            + " acknowledged grants, "
            + releases
            + " acknowledged releases and "
            + lastAckedPolicy.size()
            + " policies found after restarting every node");
  }
}
