package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Validity;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Registry: each resolve returned no ghost (an instance never registered before it returned, or
 * whose deregistration was acknowledged before it began and which was not registered again) and
 * missed no instance whose registration was acknowledged before it began, was not deregistered
 * before it ended, and that its client still believed valid (client-side deadline) when it ended.
 */
public final class RegistryChecker implements Checker {
  @Override
  public Verdict check(History h) {
    List<Completed> all = h.completed();
    List<Completed> resolves = all.stream().filter(c -> c.ok() && c.invoke().f().equals("resolve")).toList();
    if (resolves.isEmpty()) {
      return Verdict.unknown("registry", "no resolve completed");
    }
    List<Completed> registers = all.stream().filter(c -> c.invoke().f().equals("register") && c.type() != io.leasehold.jepsen.history.Op.Type.FAIL).toList();
    List<Completed> deregisters = all.stream().filter(c -> c.invoke().f().equals("deregister")).toList();
    List<String> problems = new ArrayList<>();
    int seen = 0;
    for (Completed r : resolves) {
      String service = r.invoke().key();
      long from = r.invoke().nanos();
      long to = r.completion().nanos();
      Set<String> got = new HashSet<>(r.completion().value().isEmpty() ? List.of() : Arrays.asList(r.completion().value().split(",")));
      seen += got.size();
      for (String instance : got) {
        String name = "service/" + service + "/" + instance;
        boolean possible = registers.stream().anyMatch(g -> g.invoke().key().equals(name) && g.invoke().nanos() < to
            && deregisters.stream().noneMatch(d -> d.ok() && d.invoke().key().equals(name) && d.invoke().token().equals(g.completion().token())
                && d.completion().nanos() < from));
        if (!possible) {
          problems.add("resolve " + r.completion() + " returned " + instance + ", which no live registration explains");
        }
      }
      for (Validity v : h.validities()) {
        if (!v.name().startsWith("service/" + service + "/")) {
          continue;
        }
        String instance = v.name().substring(("service/" + service + "/").length());
        boolean acked = registers.stream().anyMatch(g -> g.ok() && g.invoke().key().equals(v.name())
            && g.completion().token().orElse(-1) == v.token() && g.completion().nanos() < from);
        if (acked && v.fromNanos() < from && v.untilNanos() > to && !got.contains(instance)) {
          problems.add("resolve " + r.completion() + " missed " + instance + " (token " + v.token() + "), registered and valid from "
              + v.fromNanos() + " to " + v.untilNanos());
        }
      }
    }
    return Verdict.of("registry", problems, resolves.size() + " resolves returning " + seen + " instances in all");
  }
}
