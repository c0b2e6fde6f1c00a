package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Validity;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Exclusion: for each name, no two clients' client-side validity intervals overlap — what the SDK
 * promises (its deadline is never later than the cluster's), not what the server believes. An empty
 * interval (a grant whose reply reached the client after its deadline) is no belief at all.
 */
public final class ExclusionChecker implements Checker {
  @Override
  public Verdict check(History h) {
    Map<String, List<Validity>> byName = new TreeMap<>();
    h.validities().forEach(v -> byName.computeIfAbsent(v.name(), n -> new ArrayList<>()).add(v));
    List<String> problems = new ArrayList<>();
    for (List<Validity> vs : byName.values()) {
      vs.sort(Comparator.comparingLong(Validity::fromNanos));
      Validity reach = null;
      for (Validity v : vs) {
        if (v.untilNanos() <= v.fromNanos()) {
          // Empty: the client learned of the grant only once its deadline had passed (the reply
          // came later than the TTL), so it never believed it held the name.
          continue;
        }
        if (reach != null
            && v.overlaps(reach)
            && !(v.token() == reach.token() && v.client().equals(reach.client()))) {
          problems.add(
              v.name()
                  + ": "
                  + v.client()
                  + " (token "
                  + v.token()
                  + ") believed it held it from "
                  + v.fromNanos()
                  + " while "
                  + reach.client()
                  + " (token "
                  + reach.token()
                  + ") still did until "
                  + reach.untilNanos()
                  + ": overlap "
                  + (Math.min(reach.untilNanos(), v.untilNanos()) - v.fromNanos()) / 1_000_000.0
                  + " ms");
        }
        if (reach == null || v.untilNanos() > reach.untilNanos()) {
          reach = v;
        }
      }
    }
    return Verdict.of(
        "exclusion",
        problems,
        h.validities().size() + " client-side validity intervals on " + byName.size() + " names");
  }
}
