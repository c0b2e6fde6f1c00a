package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.WatchedEvent;
import io.leasehold.jepsen.workload.WatchWorkload;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Watch: every watcher's stream is a prefix of one common sequence, in revision order, with no
 * duplicate; and every acknowledged grant under the watched prefix, up to the last revision the
 * common sequence reached, appears in it as ACQUIRED with its token. Tokens rise with log order, so
 * "up to" is judged by token: every grant with a token at or below the highest granted in the
 * common sequence.
 */
public final class WatchChecker implements Checker {
  private final String prefix;

  public WatchChecker() {
    this("lock/");
  }

  public WatchChecker(String prefix) {
    this.prefix = prefix;
  }

  @Override
  public Verdict check(History h) {
    List<String> watchers =
        h.watchers().stream().filter(w -> !w.startsWith(WatchWorkload.ACROSS)).toList();
    if (watchers.isEmpty()) {
      return Verdict.unknown("watch", "no watchers");
    }
    Map<String, List<WatchedEvent>> streams = new LinkedHashMap<>();
    watchers.forEach(w -> streams.put(w, new ArrayList<>()));
    h.watchedEvents().stream()
        .filter(e -> streams.containsKey(e.watcher()))
        .forEach(e -> streams.get(e.watcher()).add(e));
    List<String> problems = new ArrayList<>();
    List<WatchedEvent> longest = List.of();
    for (Map.Entry<String, List<WatchedEvent>> s : streams.entrySet()) {
      Set<String> seen = new HashSet<>();
      long last = 0;
      for (WatchedEvent e : s.getValue()) {
        if (!seen.add(e.identity())) {
          problems.add(s.getKey() + " saw a duplicate: " + e.identity());
        }
        if (e.revision() < last) {
          problems.add(s.getKey() + " went back from revision " + last + " to " + e.revision());
        }
        last = Math.max(last, e.revision());
      }
      if (s.getValue().size() > longest.size()) {
        longest = s.getValue();
      }
    }
    for (Map.Entry<String, List<WatchedEvent>> s : streams.entrySet()) {
      List<WatchedEvent> mine = s.getValue();
      for (int i = 0; i < mine.size(); i++) {
        if (!mine.get(i).identity().equals(longest.get(i).identity())) {
          problems.add(
              s.getKey()
                  + " diverges from "
                  + longest.get(0).watcher()
                  + " at event "
                  + i
                  + ": "
                  + mine.get(i).identity()
                  + " vs "
                  + longest.get(i).identity()
                  + (mine.get(i).revision() > longest.get(i).revision() ? " (a gap)" : ""));
          break;
        }
      }
    }
    long reached = longest.isEmpty() ? 0 : longest.get(longest.size() - 1).revision();
    Set<String> acquired = new HashSet<>();
    longest.stream()
        .filter(e -> e.type().equals("ACQUIRED"))
        .forEach(e -> acquired.add(e.name() + "@" + e.token()));
    long highestToken =
        longest.stream()
            .filter(e -> e.type().equals("ACQUIRED"))
            .mapToLong(WatchedEvent::token)
            .max()
            .orElse(0);
    int grants = 0;
    for (Completed c : h.completed()) {
      if (Grants.isGrant(c)
          && c.invoke().key().startsWith(prefix)
          && Grants.token(c) <= highestToken) {
        // An idempotent re-acquire returns the earlier grant's token: its ACQUIRED is that entry's.
        grants++;
        if (!acquired.contains(c.invoke().key() + "@" + Grants.token(c))) {
          problems.add("acknowledged grant missing from the watch streams: " + c.completion());
        }
      }
    }
    int min = streams.values().stream().mapToInt(List::size).min().orElse(0);
    return Verdict.of(
        "watch",
        problems,
        streams.size()
            + " watchers saw "
            + min
            + " to "
            + longest.size()
            + " events up to revision "
            + reached
            + "; "
            + grants
            + " acknowledged grants found in them");
  }
}
