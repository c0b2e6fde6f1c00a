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
}
