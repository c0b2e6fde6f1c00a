package io.leasehold.jepsen.checker;

import io.leasehold.jepsen.history.Completed;
import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.WatchedEvent;
import io.leasehold.jepsen.workload.WatchWorkload;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Watches of every name on a cluster with lease groups ({@link WatchWorkload#ACROSS} watchers):
 * their streams interleave the groups' events, whose revisions compare only within a group, and a
 * namespace's events are one group's at a time (a move takes it to another). So each watcher's
 * stream is cut per namespace, and each cut must be as a watch of that namespace alone would be: in
 * revision order within each group, no duplicate, a prefix of one common sequence (the longest
 * watcher's, which orders the groups' events as the namespace's moves did), and holding every
 * acknowledged grant of the namespace up to the highest token that sequence reached. The watchers
 * start before any grant of the run, so every grant is owed.
 */
public final class AcrossWatchChecker implements Checker {
  @Override
  public Verdict check(History h) {
    List<String> watchers =
        h.watchers().stream().filter(w -> w.startsWith(WatchWorkload.ACROSS)).toList();
    if (watchers.isEmpty()) {
      return Verdict.unknown("watch-across", "no watchers of every name");
    }
    // watcher -> namespace -> events in the order received
    Map<String, Map<String, List<WatchedEvent>>> cuts = new LinkedHashMap<>();
    watchers.forEach(w -> cuts.put(w, new TreeMap<>()));
    for (WatchedEvent e : h.watchedEvents()) {
      Map<String, List<WatchedEvent>> mine = cuts.get(e.watcher());
      if (mine != null) {
        mine.computeIfAbsent(namespace(e.name()), ns -> new ArrayList<>()).add(e);
      }
    }
    Set<String> namespaces = new java.util.TreeSet<>();
    cuts.values().forEach(m -> namespaces.addAll(m.keySet()));
    List<String> problems = new ArrayList<>();
    int events = 0;
    int grants = 0;
    for (String ns : namespaces) {
      List<WatchedEvent> longest = List.of();
      for (String w : watchers) {
        List<WatchedEvent> cut = cuts.get(w).getOrDefault(ns, List.of());
        Set<String> seen = new HashSet<>();
        Map<Integer, Long> last = new HashMap<>();
        for (WatchedEvent e : cut) {
          if (!seen.add(e.group() + ":" + e.identity())) {
            problems.add(w + " saw a duplicate in " + ns + ": " + e.identity());
          }
          long before = last.getOrDefault(e.group(), 0L);
          if (e.revision() < before) {
            problems.add(
                w
                    + " went back in "
                    + ns
                    + " (group "
                    + e.group()
                    + ") from revision "
                    + before
                    + " to "
                    + e.revision());
          }
          last.merge(e.group(), e.revision(), Math::max);
        }
        if (cut.size() > longest.size()) {
          longest = cut;
        }
      }
      events += longest.size();
      for (String w : watchers) {
        List<WatchedEvent> cut = cuts.get(w).getOrDefault(ns, List.of());
        for (int i = 0; i < cut.size(); i++) {
          if (!(cut.get(i).group() + ":" + cut.get(i).identity())
              .equals(longest.get(i).group() + ":" + longest.get(i).identity())) {
            problems.add(
                w
                    + " diverges in "
                    + ns
                    + " at event "
                    + i
                    + ": "
                    + cut.get(i).identity()
                    + " vs "
                    + longest.get(i).identity());
            break;
          }
        }
      }
      Set<String> acquired = new HashSet<>();
      long highest = 0;
      for (WatchedEvent e : longest) {
        if (e.type().equals("ACQUIRED")) {
          acquired.add(e.name() + "@" + e.token());
          highest = Math.max(highest, e.token());
        }
      }
      for (Completed c : h.completed()) {
        if (Grants.isGrant(c)
            && namespace(c.invoke().key()).equals(ns)
            && Grants.token(c) <= highest) {
          grants++;
          if (!acquired.contains(c.invoke().key() + "@" + Grants.token(c))) {
            problems.add(
                "acknowledged grant missing from the watches of every name: " + c.completion());
          }
        }
      }
    }
    return Verdict.of(
        "watch-across",
        problems,
        watchers.size()
            + " watchers of every name; "
            + events
            + " events in "
            + namespaces.size()
            + " namespaces in the longest streams; "
            + grants
            + " acknowledged grants found in them");
  }

  private static String namespace(String name) {
    int slash = name.indexOf('/');
    return slash < 0 ? name : name.substring(0, slash);
  }
}
