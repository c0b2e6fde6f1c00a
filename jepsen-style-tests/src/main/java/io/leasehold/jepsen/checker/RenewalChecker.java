package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Op;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A renewal the server acknowledged holds for its whole TTL: after a renewal of (name, token)
 * answered {@code RENEWED ttl=T}, invoked at time i, every read of that name by the same process
 * that completes before i + T must find the lease with that token — unless the process itself
 * acquired, renewed or released the name in between. The server starts the renewed TTL when it
 * applies the renewal, after i, and clocks on one machine agree, so nothing but a lost renewal (an
 * Expire the leader proposed before the renewal and applied after it) ends the lease sooner. Only
 * names under {@code prefix}, whose processes do nothing else to them.
 */
public final class RenewalChecker implements Checker {
  private static final Pattern RENEWED = Pattern.compile("RENEWED ttl=(\\d+)ms");
  private final String prefix;

  public RenewalChecker() {
    this("lock/edge-");
  }

  public RenewalChecker(String prefix) {
    this.prefix = prefix;
  }

  @Override
  public Verdict check(History h) {
    Map<String, List<Completed>> byProcessAndName = new TreeMap<>();
    for (Completed c : h.completed()) {
      if (c.invoke().key().startsWith(prefix)) {
        byProcessAndName
            .computeIfAbsent(c.invoke().process() + " " + c.invoke().key(), k -> new ArrayList<>())
            .add(c);
      }
    }
    List<String> problems = new ArrayList<>();
    int renewals = 0;
    int renewed = 0;
    int reads = 0;
    for (List<Completed> ops : byProcessAndName.values()) {
      ops.sort(Comparator.comparingLong(c -> c.invoke().nanos()));
      Completed lastRenewal = null;
      long ttlNanos = 0;
      for (Completed c : ops) {
        String f = c.invoke().f();
        if (f.equals("get")) {
          if (lastRenewal == null
              || !c.ok()
              || c.invoke().nanos() < lastRenewal.completion().nanos()
              || c.completion().nanos() >= lastRenewal.invoke().nanos() + ttlNanos) {
            continue;
          }
          reads++;
          Op seen = c.completion();
          Op r = lastRenewal.invoke();
          boolean found =
              seen.value().equals("FOUND")
                  && seen.holder().equals(r.holder())
                  && seen.token().equals(r.token());
          if (!found) {
            problems.add(
                "renewal "
                    + lastRenewal.completion()
                    + " (invoked "
                    + r
                    + ") lost within its TTL: the read "
                    + seen
                    + ", "
                    + (seen.nanos() - r.nanos()) / 1_000_000
                    + " ms after the renewal was sent, found "
                    + (seen.value().equals("FOUND")
                        ? seen.holder().orElse("?") + " token " + seen.token().orElse(-1)
                        : "no lease"));
          }
          continue;
        }
        // Anything else the process did to the name ends what the last renewal promised.
        lastRenewal = null;
        if (f.equals("renew")) {
          renewals++;
          Matcher m = RENEWED.matcher(c.completion().value());
          if (c.ok() && m.matches()) {
            renewed++;
            lastRenewal = c;
            ttlNanos = Long.parseLong(m.group(1)) * 1_000_000;
          }
        }
      }
    }
    if (renewals == 0) {
      return Verdict.unknown("renewal", "no renewals under " + prefix + " to check");
    }
    return Verdict.of(
        "renewal",
        problems,
        renewals
            + " renewals near the deadline, "
            + renewed
            + " acknowledged; "
            + reads
            + " reads within a renewed TTL");
  }
}
