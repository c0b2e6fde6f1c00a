package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.history.History;
import org.junit.jupiter.api.Test;

class TransferCheckerTest {
  final TransferChecker checker = new TransferChecker();

  @Test
  void handoffsWithLargerTokensAndNoGrantBetweenPass() {
    History h =
        new Histories()
            .granted("a", "lock/h", 512, 0, 10)
            .transferred("a", "lock/h", 512, "b", 1024, 20, 30)
            .granted("b", "lock/h", 1024, 40, 50)
            .transferred("b", "lock/h", 1024, "a", 1536, 60, 70)
            .granted("c", "lock/other", 1280, 45, 55)
            .build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
  }

  @Test
  void aTransferThatGrantedNoLargerTokenIsCaught() {
    History h =
        new Histories()
            .granted("a", "lock/h", 512, 0, 10)
            .transferred("a", "lock/h", 512, "b", 512, 20, 30)
            .build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.toString().contains("not larger"), v.toString());
  }

  @Test
  void aGrantWhileTheNameWasFreeDuringAHandoffIsCaught() {
    // The planted violation: a third holder got the name between the ended lease and the transfer's
    // grant.
    History h =
        new Histories()
            .granted("a", "lock/h", 512, 0, 10)
            .granted("c", "lock/h", 768, 12, 14)
            .transferred("a", "lock/h", 512, "b", 1024, 20, 30)
            .build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.toString().contains("free in between"), v.toString());
  }

  @Test
  void theReceiversRepeatOfTheHandedLeaseIsNoNewGrantForFencing() {
    // b takes up the lease it was handed after d was granted another name with a larger token.
    History h =
        new Histories()
            .granted("a", "lock/h", 512, 0, 10)
            .transferred("a", "lock/h", 512, "b", 1024, 20, 30)
            .granted("d", "lock/x", 1280, 32, 34)
            .granted("b", "lock/h", 1024, 40, 50)
            .build();
    Verdict v = new FencingChecker().check(h);
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
  }
}
