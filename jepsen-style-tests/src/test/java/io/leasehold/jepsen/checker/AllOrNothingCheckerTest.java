package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.history.History;
import org.junit.jupiter.api.Test;

class AllOrNothingCheckerTest {
  final AllOrNothingChecker checker = new AllOrNothingChecker();

  @Test
  void callsThatGrantedAllOrNoneArePass() {
    History h =
        new Histories()
            .allOrNothing("a", "lock/bulk-1,lock/bulk-2", "ALL", 0, 10)
            .allOrNothing("b", "lock/bulk-1,lock/bulk-3", "NONE", 5, 15)
            .build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
    assertTrue(
        v.summary().contains("1 all-or-nothing acquisitions granted every name"), v.summary());
  }

  @Test
  void aCallThatGrantedSomeIsCaught() {
    History h = new Histories().allOrNothing("a", "lock/bulk-1,lock/bulk-2", "SOME", 0, 10).build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.toString().contains("some names granted and some not"), v.toString());
  }
}
