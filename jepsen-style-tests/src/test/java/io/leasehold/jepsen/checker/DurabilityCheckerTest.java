package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.history.FinalState;
import io.leasehold.jepsen.history.FinalState.Ended;
import io.leasehold.jepsen.history.FinalState.Held;
import io.leasehold.jepsen.history.History;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DurabilityCheckerTest {
  final DurabilityChecker checker = new DurabilityChecker();
  final History history =
      new Histories()
          .granted("a", "lock/x", 5, 0, 10)
          .released("a", "lock/x", 5, 11, 12)
          .granted("b", "lock/x", 9, 13, 14)
          .policy("pol", 101, 0, 5)
          .policy("pol", 102, 6, 7)
          .build();

  @Test
  void everythingAcknowledgedSurvivesPasses() {
    FinalState fin =
        new FinalState(
            Map.of("lock/x", Optional.of(new Held("b", 9))),
            Map.of("lock/x", List.of(new Ended(5, "REASON_RELEASED"))),
            Map.of("pol", 102L),
            true);
    assertEquals(Verdict.Result.VALID, checker.check(history.withFinalState(fin)).result());
  }

  @Test
  void aLostGrantIsCaught() {
    FinalState fin =
        new FinalState(
            Map.of("lock/x", Optional.empty()),
            Map.of("lock/x", List.of(new Ended(5, "REASON_RELEASED"))),
            Map.of("pol", 102L),
            true);
    Verdict v = checker.check(history.withFinalState(fin));
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(
        v.problems().get(0).contains("grant lost") && v.problems().get(0).contains("token=9"),
        v.toString());
  }

  @Test
  void aLostReleaseIsCaught() {
    FinalState fin =
        new FinalState(
            Map.of("lock/x", Optional.of(new Held("b", 9))),
            Map.of("lock/x", List.of(new Ended(5, "REASON_EXPIRED"))),
            Map.of("pol", 102L),
            true);
    Verdict v = checker.check(history.withFinalState(fin));
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.problems().get(0).contains("release lost"), v.toString());
  }

  @Test
  void aLostPolicyChangeIsCaught() {
    FinalState fin =
        new FinalState(
            Map.of("lock/x", Optional.of(new Held("b", 9))),
            Map.of("lock/x", List.of(new Ended(5, "REASON_RELEASED"))),
            Map.of("pol", 101L),
            true);
    Verdict v = checker.check(history.withFinalState(fin));
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.problems().get(0).contains("policy change lost"), v.toString());
  }

  @Test
  void withoutAFinalReadTheVerdictIsUnknown() {
    assertEquals(Verdict.Result.UNKNOWN, checker.check(history).result());
  }
}
