package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RegistryCheckerTest {
  final RegistryChecker checker = new RegistryChecker();

  @Test
  void resolvesThatMatchTheRegistrationsPass() {
    var h =
        new Histories()
            .registered("r", "service/svc/i1", 5, 0, 10)
            .valid("r", "service/svc/i1", 5, 10, 100)
            .resolved("svc", "i1", 20, 30)
            .deregistered("r", "service/svc/i1", 5, 100, 110)
            .resolved("svc", "", 120, 130)
            // During the deregistration either answer is right.
            .resolved("svc", "i1", 101, 105)
            .build();
    assertEquals(Verdict.Result.VALID, checker.check(h).result(), checker.check(h).toString());
  }

  @Test
  void aGhostAfterAnAcknowledgedDeregistrationIsCaught() {
    var h =
        new Histories()
            .registered("r", "service/svc/i1", 5, 0, 10)
            .deregistered("r", "service/svc/i1", 5, 20, 30)
            .resolved("svc", "i1", 40, 50)
            .build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.problems().get(0).contains("no live registration"), v.toString());
  }

  @Test
  void aNeverRegisteredInstanceIsCaught() {
    var h = new Histories().resolved("svc", "i9", 40, 50).build();
    assertEquals(Verdict.Result.INVALID, checker.check(h).result());
  }

  @Test
  void aMissingLiveInstanceIsCaught() {
    var h =
        new Histories()
            .registered("r", "service/svc/i1", 5, 0, 10)
            .valid("r", "service/svc/i1", 5, 10, 100)
            .resolved("svc", "", 20, 30)
            .build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.problems().get(0).contains("missed i1"), v.toString());
  }
}
