package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.WatchedEvent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WatchCheckerTest {
  final WatchChecker checker = new WatchChecker("lock/");
  final History grants =
      new Histories().granted("a", "lock/x", 5, 0, 10).granted("b", "lock/y", 7, 0, 10).build();

  static List<WatchedEvent> stream(String watcher, String... events) {
    List<WatchedEvent> out = new ArrayList<>();
    for (String e : events) {
      String[] p = e.split(" ");
      // "revision TYPE name token", or with the group first: "g2 revision TYPE name token"
      int group = 0;
      if (p[0].startsWith("g")) {
        group = Integer.parseInt(p[0].substring(1));
        p = java.util.Arrays.copyOfRange(p, 1, p.length);
      }
      out.add(
          new WatchedEvent(watcher, Long.parseLong(p[0]), p[1], p[2], Long.parseLong(p[3]), group));
    }
    return out;
  }

  static History with(History h, List<List<WatchedEvent>> streams) {
    List<WatchedEvent> all = new ArrayList<>();
    List<String> watchers = new ArrayList<>();
    for (List<WatchedEvent> s : streams) {
      watchers.add(s.get(0).watcher());
      all.addAll(s);
    }
    return h.withWatch(watchers, all);
  }

  @Test
  void prefixesOfOneSequencePass() {
    History h =
        with(
            grants,
            List.of(
                stream("w1", "5 ACQUIRED lock/x 5", "7 ACQUIRED lock/y 7", "8 RELEASED lock/x 5"),
                stream("w2", "5 ACQUIRED lock/x 5", "7 ACQUIRED lock/y 7")));
    assertEquals(Verdict.Result.VALID, checker.check(h).result(), checker.check(h).toString());
  }

  @Test
  void aGapIsCaught() {
    History h =
        with(
            grants,
            List.of(
                stream("w1", "5 ACQUIRED lock/x 5", "7 ACQUIRED lock/y 7", "8 RELEASED lock/x 5"),
                stream("w2", "5 ACQUIRED lock/x 5", "8 RELEASED lock/x 5")));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(
        v.problems().get(0).contains("w2 diverges") && v.problems().get(0).contains("gap"),
        v.toString());
  }

  @Test
  void aDuplicateIsCaught() {
    History h =
        with(
            grants,
            List.of(
                stream("w1", "5 ACQUIRED lock/x 5", "7 ACQUIRED lock/y 7", "7 ACQUIRED lock/y 7")));
    assertTrue(
        checker.check(h).problems().stream().anyMatch(p -> p.contains("duplicate")),
        checker.check(h).toString());
  }

  @Test
  void anAcknowledgedGrantMissingFromEveryStreamIsCaught() {
    History h = with(grants, List.of(stream("w1", "7 ACQUIRED lock/y 7", "8 RELEASED lock/y 7")));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.problems().get(0).contains("missing from the watch streams"), v.toString());
  }

  @Test
  void grantsAreMatchedByTokenWhenTokensAreNotRevisions() {
    // Log format 2: token = index * 256 + position; the events carry the entry's index as revision.
    History batched =
        new Histories()
            .granted("a", "lock/x", 5 * 256, 0, 10)
            .granted("b", "lock/y", 7 * 256 + 1, 0, 10)
            .build();
    History seen =
        with(batched, List.of(stream("w1", "5 ACQUIRED lock/x 1280", "7 ACQUIRED lock/y 1793")));
    assertEquals(
        Verdict.Result.VALID, checker.check(seen).result(), checker.check(seen).toString());
    History missing = with(batched, List.of(stream("w1", "7 ACQUIRED lock/y 1793")));
    assertTrue(
        checker.check(missing).problems().get(0).contains("missing from the watch streams"),
        checker.check(missing).toString());
  }

  /**
   * lock moves from group 1 to group 2: each watcher's watch in group 1 ends, it lists again in
   * group 2 (revision 20) and watches from there. Grants: lock/x at token 5 and lock/y at 7 in
   * group 1; lock/z at token 100 and lock/w at 110 in group 2, after the listing.
   */
  final History moved =
      new Histories()
          .granted("a", "lock/x", 5, 0, 10)
          .granted("b", "lock/y", 7, 0, 10)
          .granted("c", "lock/z", 100, 0, 10)
          .granted("d", "lock/w", 110, 0, 10)
          .build();

  /**
   * A watcher's stream that saw lock/x and lock/y granted in group 1, listed again in group 2 at
   * revision 20 after the move, and then saw {@code after}.
   */
  static List<WatchedEvent> afterMove(String watcher, String... after) {
    List<String> events =
        new ArrayList<>(
            List.of("g1 5 ACQUIRED lock/x 5", "g1 7 ACQUIRED lock/y 7", "g2 20 LISTED - 0"));
    events.addAll(List.of(after));
    return stream(watcher, events.toArray(String[]::new));
  }

  @Test
  void segmentsAfterMovesPassWhenEachIsGapFreeInItsGroup() {
    History h =
        with(
            moved,
            List.of(
                afterMove("w1", "g2 21 ACQUIRED lock/z 100", "g2 23 ACQUIRED lock/w 110"),
                stream(
                    "w2",
                    "g1 5 ACQUIRED lock/x 5",
                    "g2 20 LISTED - 0",
                    "g2 21 ACQUIRED lock/z 100",
                    "g2 23 ACQUIRED lock/w 110",
                    "g2 24 RELEASED lock/w 110")));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
    assertTrue(v.summary().contains("4 segments"), v.toString());
  }

  @Test
  void aGapInASegmentThatAnotherSegmentOfTheGroupCoversIsCaught() {
    History h =
        with(
            moved,
            List.of(
                afterMove(
                    "w1",
                    "g2 21 ACQUIRED lock/z 100",
                    "g2 22 RELEASED lock/z 100",
                    "g2 23 ACQUIRED lock/w 110"),
                afterMove("w2", "g2 21 ACQUIRED lock/z 100", "g2 23 ACQUIRED lock/w 110")));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result(), v.toString());
    assertTrue(
        v.problems().get(0).contains("w2's watch of group 2 from revision 21 lacks 22 RELEASED"),
        v.toString());
  }

  @Test
  void aGrantWithinASegmentsTokensButMissingFromItIsCaught() {
    History h =
        with(
            moved,
            List.of(afterMove("w1", "g2 21 ACQUIRED lock/z 100", "g2 25 ACQUIRED lock/v 120")));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result(), v.toString());
    assertTrue(
        v.problems().get(0).contains("acknowledged grant missing from w1's watch of group 2"),
        v.toString());
  }

  @Test
  void anEventOfAnotherGroupOrBeforeTheListingIsCaught() {
    History h =
        with(
            moved,
            List.of(afterMove("w1", "g2 19 RELEASED lock/q 90", "g1 21 ACQUIRED lock/z 100")));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result(), v.toString());
    assertTrue(v.problems().stream().anyMatch(p -> p.contains("in a watch from 21")), v.toString());
    assertTrue(
        v.problems().stream().anyMatch(p -> p.contains("an event of group 1")), v.toString());
  }
}
