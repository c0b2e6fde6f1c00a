package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Validity;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
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
    List<Completed> resolves =
        all.stream().filter(c -> c.ok() && c.invoke().f().equals("resolve")).toList();
    if (resolves.isEmpty()) {
      return Verdict.unknown("registry", "no resolve completed");
    }
    // Indexed once: a 30-minute soak has some 10,000 resolves and thousands of registrations,
    // and scanning them all for each returned instance took longer than the run.
    Map<String, Long> deregisteredBy =
        new HashMap<>(); // name + token -> earliest acknowledged deregistration
    for (Completed d : all) {
      if (d.ok() && d.invoke().f().equals("deregister")) {
        deregisteredBy.merge(
            d.invoke().key() + "#" + d.invoke().token(), d.completion().nanos(), Math::min);
      }
    }
    Map<String, List<long[]>> registrations =
        new HashMap<>(); // name -> {invoked, earliest deregistration}
    Map<String, Long> acknowledged = new HashMap<>(); // name + token -> earliest acknowledgement
    for (Completed g : all) {
      if (!g.invoke().f().equals("register") || g.type() == Op.Type.FAIL) {
        continue;
      }
      String name = g.invoke().key();
      long deregistered =
          deregisteredBy.getOrDefault(name + "#" + g.completion().token(), Long.MAX_VALUE);
      registrations
          .computeIfAbsent(name, k -> new ArrayList<>())
          .add(new long[] {g.invoke().nanos(), deregistered});
      if (g.ok() && g.completion().token().isPresent()) {
        acknowledged.merge(
            name + "#" + g.completion().token().getAsLong(), g.completion().nanos(), Math::min);
      }
    }
    Map<String, List<Validity>> validitiesByService = new HashMap<>();
    for (Validity v : h.validities()) {
      if (v.name().startsWith("service/")) {
        String rest = v.name().substring("service/".length());
        int slash = rest.indexOf('/');
        if (slash > 0) {
          validitiesByService
              .computeIfAbsent(rest.substring(0, slash), k -> new ArrayList<>())
              .add(v);
        }
      }
    }
    List<String> problems = new ArrayList<>();
    int seen = 0;
    for (Completed r : resolves) {
      String service = r.invoke().key();
      long from = r.invoke().nanos();
      long to = r.completion().nanos();
      Set<String> got =
          new HashSet<>(
              r.completion().value().isEmpty()
                  ? List.of()
                  : Arrays.asList(r.completion().value().split(",")));
      seen += got.size();
      for (String instance : got) {
        String name = "service/" + service + "/" + instance;
        boolean possible =
            registrations.getOrDefault(name, List.of()).stream()
                .anyMatch(g -> g[0] < to && !(g[1] < from));
        if (!possible) {
          problems.add(
              "resolve "
                  + r.completion()
                  + " returned "
                  + instance
                  + ", which no live registration explains");
        }
      }
      String prefix = "service/" + service + "/";
      for (Validity v : validitiesByService.getOrDefault(service, List.of())) {
        String instance = v.name().substring(prefix.length());
        Long ackedAt = acknowledged.get(v.name() + "#" + v.token());
        boolean acked = ackedAt != null && ackedAt < from;
        if (acked && v.fromNanos() < from && v.untilNanos() > to && !got.contains(instance)) {
          problems.add(
              "resolve "
                  + r.completion()
                  + " missed "
                  + instance
                  + " (token "
                  + v.token()
                  + "), registered and valid from "
                  + v.fromNanos()
                  + " to "
                  + v.untilNanos());
        }
      }
    }
    return Verdict.of(
        "registry",
        problems,
        resolves.size() + " resolves returning " + seen + " instances in all");
  }
}
