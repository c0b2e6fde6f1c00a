package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.history.Op;
import org.junit.jupiter.api.Test;

/** The verdict on namespace moves: counted, and UNKNOWN when none was done. */
class MoveCheckerTest {
  final MoveChecker checker = new MoveChecker();

  @Test
  void movesDoneRefusedAndUnansweredAreCounted() {
    Verdict v =
        checker.check(
            new Histories()
                .moved("election", Op.Type.OK, 2, 0, 10)
                .moved("partitions", Op.Type.FAIL, 0, 11, 12)
                .moved("election", Op.Type.INFO, 0, 13, 40)
                .moved("election", Op.Type.OK, 4, 20, 30)
                .build());
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
    assertTrue(
        v.summary().startsWith("2 moves done, 1 refused or abandoned, 1 unanswered"), v.summary());
    assertTrue(v.summary().contains("{election=4}"), v.summary());
  }

  @Test
  void aRunWithoutAMoveDoneTestedNothingOfMoves() {
    Verdict v = checker.check(new Histories().moved("election", Op.Type.FAIL, 0, 0, 10).build());
    assertEquals(Verdict.Result.UNKNOWN, v.result(), v.toString());
  }

  @Test
  void aMoveAnsweredWithoutAnEpochIsAProblem() {
    Verdict v = checker.check(new Histories().moved("election", Op.Type.OK, 0, 0, 10).build());
    assertEquals(Verdict.Result.INVALID, v.result(), v.toString());
  }
}
