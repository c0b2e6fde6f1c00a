package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.RegisterWrite;
import java.util.List;
import org.junit.jupiter.api.Test;

class FencingCheckerTest {
  final FencingChecker checker = new FencingChecker();

  @Test
  void increasingUniqueTokensAndMonotoneRegisterPass() {
    History h =
        new Histories()
            .granted("a", "lock/x", 5, 0, 10)
            .granted("b", "lock/x", 9, 20, 30)
            .granted("a", "lock/x", 5, 5, 12)
            .build()
            .withRegisterWrites(
                List.of(
                    new RegisterWrite(1, "lock/x", "a", 5, true, 11),
                    new RegisterWrite(2, "lock/x", "b", 9, true, 31),
                    new RegisterWrite(3, "lock/x", "a", 5, false, 32)));
    assertEquals(Verdict.Result.VALID, checker.check(h).result(), checker.check(h).toString());
  }

  /**
   * Seen in a real run: the holder acquiring its own lease again gets GRANTED with the lease's
   * (older) token.
   */
  @Test
  void aHolderReacquiringItsLeaseAfterANewerGrantElsewhereIsNotANewGrant() {
    History h =
        new Histories()
            .granted("a", "lock/x", 21, 0, 10)
            .granted("b", "lock/y", 22, 20, 30)
            .granted("a", "lock/x", 21, 40, 50)
            .build();
    assertEquals(Verdict.Result.VALID, checker.check(h).result(), checker.check(h).toString());
    // Or the earlier grant's answer was lost: the holder's repeat gets the lease it made then.
    History lost =
        new Histories()
            .acquireUnknown("a", "lock/x", 0)
            .granted("b", "lock/y", 22, 20, 30)
            .granted("a", "lock/x", 21, 40, 50)
            .build();
    assertEquals(
        Verdict.Result.VALID, checker.check(lost).result(), checker.check(lost).toString());
    // ...but a new lease with an older token invoked after the newer completed is still caught.
    History bad =
        new Histories()
            .granted("b", "lock/y", 22, 20, 30)
            .granted("a", "lock/x", 21, 40, 50)
            .build();
    assertEquals(Verdict.Result.INVALID, checker.check(bad).result());
  }

  /**
   * With lease groups, names of different namespaces are granted by different Raft groups: their
   * tokens may repeat and go back across namespaces, never within one.
   */
  @Test
  void perNamespaceTokensMayRepeatAcrossNamespacesButNotWithinOne() {
    History across =
        new Histories()
            .granted("a", "lock/x", 9, 0, 10)
            .granted("b", "service/y", 9, 20, 30)
            .granted("c", "election/z", 7, 40, 50)
            .build();
    assertEquals(Verdict.Result.INVALID, checker.check(across).result(), "cluster-wide: caught");
    Verdict v = FencingChecker.perNamespace().check(across);
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
    assertEquals(true, v.summary().contains("in each of 3 namespaces"), v.toString());

    History within =
        new Histories()
            .granted("a", "lock/x", 9, 0, 10)
            .granted("b", "service/y", 9, 20, 30)
            .granted("c", "lock/z", 7, 40, 50)
            .granted("d", "service/w", 9, 60, 70)
            .build();
    Verdict bad = FencingChecker.perNamespace().check(within);
    assertEquals(Verdict.Result.INVALID, bad.result());
    assertEquals(2, bad.problems().size(), bad.toString());
    assertEquals(true, bad.problems().get(0).contains("token went back"), bad.toString());
    assertEquals(true, bad.problems().get(1).contains("token 9 granted twice"), bad.toString());
  }

  @Test
  void aTokenGrantedToTwoHoldersIsCaught() {
    History h =
        new Histories().granted("a", "lock/x", 5, 0, 10).granted("b", "lock/x", 5, 20, 30).build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertEquals(true, v.problems().get(0).contains("token 5 granted twice"), v.toString());
  }

  @Test
  void aLaterGrantWithASmallerTokenIsCaught() {
    History h =
        new Histories().granted("a", "lock/x", 9, 0, 10).granted("b", "lock/y", 7, 20, 30).build();
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertEquals(true, v.problems().get(0).contains("token went back"), v.toString());
  }

  @Test
  void aRegisterThatAcceptsALowerTokenIsCaught() {
    History h =
        new Histories()
            .granted("a", "lock/x", 5, 0, 10)
            .granted("b", "lock/x", 9, 20, 30)
            .build()
            .withRegisterWrites(
                List.of(
                    new RegisterWrite(1, "lock/x", "b", 9, true, 31),
                    new RegisterWrite(2, "lock/x", "a", 5, true, 32)));
    Verdict v = checker.check(h);
    assertEquals(Verdict.Result.INVALID, v.result());
    assertEquals(true, v.problems().get(0).contains("accepted token 5"), v.toString());
  }

  @Test
  void aRegisterWriteWithATokenNeverGrantedForThatNameIsCaught() {
    History h =
        new Histories()
            .granted("a", "lock/x", 5, 0, 10)
            .build()
            .withRegisterWrites(List.of(new RegisterWrite(1, "lock/y", "a", 5, true, 11)));
    assertEquals(Verdict.Result.INVALID, checker.check(h).result());
  }
}
