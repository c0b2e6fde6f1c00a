package io.leasehold.jepsen.checker;

import static io.leasehold.jepsen.checker.WatchCheckerTest.stream;
import static io.leasehold.jepsen.checker.WatchCheckerTest.with;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.history.History;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Watches of every name with lease groups: revisions compare only within a namespace's group, so
 * the streams are judged per namespace.
 */
class AcrossWatchCheckerTest {
  final AcrossWatchChecker checker = new AcrossWatchChecker();

  // lock lives in one group, election in another: their revisions interleave without order.
  final History grants =
      new Histories()
          .granted("a", "lock/x", 5, 0, 10)
          .granted("b", "election/e", 3, 0, 10)
          .granted("c", "lock/y", 7, 0, 10)
          .build();

  @Test
  void groupsInterleavedInAnyOrderPassWhenEachNamespaceIsInOrder() {
    History h =
        with(
            grants,
            List.of(
                stream(
                    "across-n1",
                    "5 ACQUIRED lock/x 5",
                    "3 ACQUIRED election/e 3",
                    "7 ACQUIRED lock/y 7",
                    "4 RELEASED election/e 3"),
                stream(
                    "across-roaming",
                    "3 ACQUIRED election/e 3",
                    "5 ACQUIRED lock/x 5",
                    "4 RELEASED election/e 3")));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
  }

  @Test
  void aGapDuplicateOrRegressionInsideOneNamespaceIsCaught() {
    History gap =
        with(
            grants,
            List.of(
                stream(
                    "across-n1",
                    "5 ACQUIRED lock/x 5",
                    "3 ACQUIRED election/e 3",
                    "7 ACQUIRED lock/y 7"),
                stream("across-roaming", "3 ACQUIRED election/e 3", "7 ACQUIRED lock/y 7")));
    Verdict v = checker.check(gap);
    assertEquals(Verdict.Result.INVALID, v.result(), v.toString());
    assertTrue(v.problems().get(0).contains("across-roaming diverges in lock"), v.toString());

    History twice =
        with(
            grants,
            List.of(
                stream(
                    "across-n1",
                    "5 ACQUIRED lock/x 5",
                    "3 ACQUIRED election/e 3",
                    "5 ACQUIRED lock/x 5")));
    assertTrue(
        checker.check(twice).problems().stream().anyMatch(p -> p.contains("duplicate in lock")),
        checker.check(twice).toString());

    History back =
        with(grants, List.of(stream("across-n1", "7 ACQUIRED lock/y 7", "5 ACQUIRED lock/x 5")));
    assertTrue(
        checker.check(back).problems().stream().anyMatch(p -> p.contains("went back in lock")),
        checker.check(back).toString());
  }

  @Test
  void aNamespaceThatMovedIsInOrderWithinEachGroupNotAcrossThem() {
    History moved =
        new Histories()
            .granted("a", "election/e", 900, 0, 10)
            .granted("b", "election/f", 4_100, 0, 10)
            .build();
    // election moved from group 1 (revisions near 900) to group 3 (whose log is shorter).
    List<String> events =
        List.of(
            "g1 900 ACQUIRED election/e 900",
            "g1 902 RELEASED election/e 900",
            "g3 41 ACQUIRED election/f 4100");
    Verdict v =
        checker.check(
            with(
                moved,
                List.of(
                    stream("across-n1", events.toArray(String[]::new)),
                    stream("across-roaming", events.toArray(String[]::new)))));
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());

    Verdict back =
        checker.check(
            with(
                moved,
                List.of(
                    stream(
                        "across-n1",
                        "g1 902 RELEASED election/e 900",
                        "g1 900 ACQUIRED election/e 900",
                        "g3 41 ACQUIRED election/f 4100"))));
    assertTrue(
        back.problems().stream().anyMatch(p -> p.contains("went back in election (group 1)")),
        back.toString());

    Verdict reordered =
        checker.check(
            with(
                moved,
                List.of(
                    stream("across-n1", events.toArray(String[]::new)),
                    stream(
                        "across-roaming",
                        "g1 900 ACQUIRED election/e 900",
                        "g3 41 ACQUIRED election/f 4100",
                        "g1 902 RELEASED election/e 900"))));
    assertTrue(
        reordered.problems().stream()
            .anyMatch(p -> p.contains("across-roaming diverges in election")),
        reordered.toString());
  }

  @Test
  void anAcknowledgedGrantMissingFromItsNamespaceIsCaught() {
    History h =
        with(
            grants, List.of(stream("across-n1", "3 ACQUIRED election/e 3", "7 ACQUIRED lock/y 7")));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result(), v.toString());
    assertTrue(v.problems().get(0).contains("lock/x"), v.toString());
  }

  @Test
  void watchersOfOneNamespaceAreLeftToTheWatchChecker() {
    History h = with(grants, List.of(stream("watch-n1", "5 ACQUIRED lock/x 5")));
    assertEquals(Verdict.Result.UNKNOWN, checker.check(h).result());
    assertEquals(
        Verdict.Result.VALID,
        new WatchChecker("lock/")
            .check(
                with(
                    grants,
                    List.of(
                        stream("watch-n1", "5 ACQUIRED lock/x 5", "7 ACQUIRED lock/y 7"),
                        stream("across-n1", "3 ACQUIRED election/e 3"))))
            .result(),
        "the watch checker ignores the watchers of every name");
  }
}
