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
 *
 * <p>When the watched namespace moves between lease groups, each watcher's watch ends with the
 * move, and it lists again and watches from the listing in the new group ({@link
 * WatchWorkload#LISTED}): its stream is then segments, each gap-free in one group from its start
 * (revision 1, or the listing's revision + 1). They are judged per segment ({@link #segments}).
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
    if (streams.values().stream()
        .flatMap(List::stream)
        .anyMatch(e -> e.type().equals(WatchWorkload.LISTED))) {
      return segments(h, streams);
    }
    List<String> problems = new ArrayList<>();
    List<WatchedEvent> longest = List.of();
    for (Map.Entry<String, List<WatchedEvent>> s : streams.entrySet()) {
      inOrder(s.getKey(), s.getValue(), problems);
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

  /** One stream (or segment) of {@code watcher}: no duplicate, and no revision going back. */
  private static void inOrder(String watcher, List<WatchedEvent> events, List<String> problems) {
    Set<String> seen = new HashSet<>();
    long last = 0;
    for (WatchedEvent e : events) {
      if (!seen.add(e.identity())) {
        problems.add(watcher + " saw a duplicate: " + e.identity());
      }
      if (e.revision() < last) {
        problems.add(watcher + " went back from revision " + last + " to " + e.revision());
      }
      last = Math.max(last, e.revision());
    }
  }

  /** A stretch of one watcher's stream in one group, from {@code start} on, gap-free. */
  private record Segment(String watcher, int group, long start, List<WatchedEvent> events) {}

  /**
   * Streams cut into segments by listings. Within each segment: no duplicate, revisions never go
   * back, one group. Across segments of one group: every event any segment saw at a revision
   * another segment covers (from its start to before its last event's) is in that one too, so no
   * segment has a gap where another saw an event, and none saw a different event there. And every
   * acknowledged grant whose token lies within the tokens a segment granted (from 0, for a segment
   * from revision 1) is in that segment: within one group tokens rise with revisions, and a
   * namespace's tokens rise across its moves.
   */
  private Verdict segments(History h, Map<String, List<WatchedEvent>> streams) {
    List<String> problems = new ArrayList<>();
    List<Segment> segments = new ArrayList<>();
    for (Map.Entry<String, List<WatchedEvent>> s : streams.entrySet()) {
      Segment current = null;
      for (WatchedEvent e : s.getValue()) {
        if (e.type().equals(WatchWorkload.LISTED)) {
          current = new Segment(s.getKey(), e.group(), e.revision() + 1, new ArrayList<>());
          segments.add(current);
          continue;
        }
        if (current == null) {
          current = new Segment(s.getKey(), e.group(), 1, new ArrayList<>());
          segments.add(current);
        }
        if (e.group() != current.group()) {
          problems.add(
              s.getKey()
                  + " saw an event of group "
                  + e.group()
                  + " in a watch of group "
                  + current.group()
                  + ": "
                  + e.identity());
        }
        current.events().add(e);
      }
    }
    Map<Integer, java.util.NavigableMap<Long, Set<String>>> seenAt = new java.util.HashMap<>();
    for (Segment seg : segments) {
      inOrder(seg.watcher(), seg.events(), problems);
      for (WatchedEvent e : seg.events()) {
        if (e.revision() < seg.start()) {
          problems.add(
              seg.watcher()
                  + " saw revision "
                  + e.revision()
                  + " in a watch from "
                  + seg.start()
                  + " of group "
                  + seg.group());
        }
        seenAt
            .computeIfAbsent(seg.group(), g -> new java.util.TreeMap<>())
            .computeIfAbsent(e.revision(), r -> new HashSet<>())
            .add(e.identity());
      }
    }
    for (Segment seg : segments) {
      if (seg.events().isEmpty()) {
        continue;
      }
      long end = seg.events().get(seg.events().size() - 1).revision();
      Set<String> mine = new HashSet<>();
      seg.events().forEach(e -> mine.add(e.identity()));
      // The last revision a segment reached may have reached it in part (a watch closed between
      // two messages of one entry): it is judged up to the one before.
      for (Map.Entry<Long, Set<String>> at :
          seenAt.get(seg.group()).subMap(seg.start(), true, end, false).entrySet()) {
        for (String event : at.getValue()) {
          if (!mine.contains(event)) {
            problems.add(
                seg.watcher()
                    + "'s watch of group "
                    + seg.group()
                    + " from revision "
                    + seg.start()
                    + " lacks "
                    + event
                    + ", which another watch of the group saw");
          }
        }
      }
    }
    int grants = 0;
    for (Segment seg : segments) {
      Set<String> acquired = new HashSet<>();
      long low = Long.MAX_VALUE;
      long high = 0;
      for (WatchedEvent e : seg.events()) {
        if (e.type().equals("ACQUIRED")) {
          acquired.add(e.name() + "@" + e.token());
          low = Math.min(low, e.token());
          high = Math.max(high, e.token());
        }
      }
      if (seg.start() == 1) {
        low = 0;
      }
      for (Completed c : h.completed()) {
        if (Grants.isGrant(c)
            && c.invoke().key().startsWith(prefix)
            && Grants.token(c) >= low
            && Grants.token(c) <= high) {
          grants++;
          if (!acquired.contains(c.invoke().key() + "@" + Grants.token(c))) {
            problems.add(
                "acknowledged grant missing from "
                    + seg.watcher()
                    + "'s watch of group "
                    + seg.group()
                    + " from revision "
                    + seg.start()
                    + ", whose grants span its token: "
                    + c.completion());
          }
        }
      }
    }
    long listings =
        streams.values().stream()
            .flatMap(List::stream)
            .filter(e -> e.type().equals(WatchWorkload.LISTED))
            .count();
    return Verdict.of(
        "watch",
        problems,
        streams.size()
            + " watchers in "
            + segments.size()
            + " segments ("
            + listings
            + " listings after moves) in groups "
            + new java.util.TreeSet<>(seenAt.keySet())
            + "; "
            + grants
            + " acknowledged grants looked for in the segments whose tokens span them"
            + " (once per segment)");
  }
}
