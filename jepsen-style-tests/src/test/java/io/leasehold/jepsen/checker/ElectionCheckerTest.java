package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.RegisterWrite;
import java.util.List;
import org.junit.jupiter.api.Test;

class ElectionCheckerTest {
  final ElectionChecker checker = new ElectionChecker();

  @Test
  void successiveLeadersWithGrowingTokensAndFencedWritesPass() {
    History h =
        new Histories()
            .valid("a", "election/e", 512, 0, 10)
            .valid("b", "election/e", 768, 20, 30)
            .valid("b", "election/e", 768, 30, 40)
            .build()
            .withRegisterWrites(
                List.of(
                    new RegisterWrite(1, "election/e", "a", 512, true, 5),
                    new RegisterWrite(2, "election/e", "b", 768, true, 25),
                    new RegisterWrite(3, "election/e", "a", 512, false, 26)));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
  }

  @Test
  void overlappingLeadersAreCaught() {
    History h =
        new Histories()
            .valid("a", "election/e", 512, 0, 25)
            .valid("b", "election/e", 768, 20, 30)
            .build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.toString().contains("still led"), v.toString());
  }

  @Test
  void aNewLeaderWithASmallerTokenIsCaught() {
    History h =
        new Histories()
            .valid("a", "election/e", 768, 0, 10)
            .valid("b", "election/e", 512, 20, 30)
            .build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.toString().contains("not larger"), v.toString());
  }

  @Test
  void anAcceptedWriteByADeposedLeaderIsCaught() {
    History h =
        new Histories()
            .valid("a", "election/e", 512, 0, 10)
            .valid("b", "election/e", 768, 20, 30)
            .build()
            .withRegisterWrites(
                List.of(
                    new RegisterWrite(1, "election/e", "b", 768, true, 25),
                    new RegisterWrite(2, "election/e", "a", 512, true, 26)));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.toString().contains("deposed leader a"), v.toString());
  }
}
