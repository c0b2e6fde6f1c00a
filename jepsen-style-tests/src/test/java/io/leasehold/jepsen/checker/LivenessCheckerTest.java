package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.LivenessProbe;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class LivenessCheckerTest {
  final LivenessChecker checker = new LivenessChecker();
  static final long SECOND = 1_000_000_000L;

  @Test
  void aGrantWithinTheBoundPasses() {
    History h =
        History.empty()
            .withLiveness(
                List.of(new LivenessProbe("lock/l", 0, OptionalLong.of(3 * SECOND), 10 * SECOND)));
    assertEquals(Verdict.Result.VALID, checker.check(h).result());
  }

  @Test
  void aLateGrantIsCaught() {
    History h =
        History.empty()
            .withLiveness(
                List.of(new LivenessProbe("lock/l", 0, OptionalLong.of(11 * SECOND), 10 * SECOND)));
    assertEquals(Verdict.Result.INVALID, checker.check(h).result());
  }

  @Test
  void noGrantAtAllIsCaught() {
    History h =
        History.empty()
            .withLiveness(
                List.of(new LivenessProbe("lock/l", 0, OptionalLong.empty(), 10 * SECOND)));
    assertEquals(Verdict.Result.INVALID, checker.check(h).result());
  }
}
