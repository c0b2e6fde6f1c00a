package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ExclusionCheckerTest {
  final ExclusionChecker checker = new ExclusionChecker();

  @Test
  void disjointValidityIntervalsPass() {
    var h =
        new Histories()
            .valid("a", "lock/x", 5, 0, 100)
            .valid("b", "lock/x", 9, 100, 200)
            .valid("c", "lock/y", 11, 50, 150)
            .build();
    assertEquals(Verdict.Result.VALID, checker.check(h).result());
  }

  @Test
  void overlappingClientValidityOnOneNameIsCaught() {
    var h =
        new Histories()
            .valid("a", "lock/x", 5, 0, 100)
            .valid("c", "lock/x", 12, 300, 400)
            .valid("b", "lock/x", 9, 90, 200)
            .build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(
        v.problems().get(0).contains("b (token 9)") && v.problems().get(0).contains("a (token 5)"),
        v.toString());
  }

  @Test
  void anIntervalInsideALongEarlierOneIsCaught() {
    var h =
        new Histories()
            .valid("a", "lock/x", 5, 0, 1000)
            .valid("b", "lock/x", 9, 100, 200)
            .valid("c", "lock/x", 12, 300, 400)
            .build();
    assertEquals(2, checker.check(h).problems().size());
  }

  @Test
  void theSameLeaseHeldAgainBySameClientIsNoOverlap() {
    var h =
        new Histories().valid("a", "lock/x", 5, 0, 100).valid("a", "lock/x", 5, 50, 150).build();
    assertEquals(Verdict.Result.VALID, checker.check(h).result());
  }

  /**
   * A fault run's history: a grant answered 4.8 s after it was asked, with a TTL of 3 s, so the SDK
   * had already counted it lost (its deadline passed) and the name was granted again to another
   * client before the reply came. The first client's interval is empty: it never held the name.
   */
  @Test
  void aGrantAnsweredAfterItsDeadlineIsAnEmptyIntervalAndNoOverlap() {
    var h =
        new Histories()
            .valid("bulk-440-3", "lock/bulk-4", 4579328, 19775633635322L, 19778440084875L)
            .valid("bulk-420-1", "lock/bulk-4", 4243457, 19775664690306L, 19775664690306L)
            .build();
    assertEquals(Verdict.Result.VALID, checker.check(h).result());
  }

  @Test
  void anIntervalOfOneNanosecondInsideAnotherIsStillCaught() {
    var h =
        new Histories()
            .valid("bulk-440-3", "lock/bulk-4", 4579328, 19775633635322L, 19778440084875L)
            .valid("bulk-420-1", "lock/bulk-4", 4243457, 19775664690306L, 19775664690307L)
            .build();
    assertEquals(Verdict.Result.INVALID, checker.check(h).result());
  }
}
