package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Validity;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class PartitionCheckerTest {
  static final String P0 = "partitions/g/p/0";
  final PartitionChecker checker = new PartitionChecker("partitions/");

  /** Hand-made partition histories: times are plain numbers, op ids in call order. */
  static final class Steps {
    final List<Op> ops = new ArrayList<>();
    final List<Validity> validities = new ArrayList<>();

    Steps op(String f, String name, String holder, long token, String value, long at) {
      Op inv =
          new Op(
              ops.size() + 1,
              0,
              Op.Type.INVOKE,
              f,
              name,
              Optional.of(holder),
              OptionalLong.of(token),
              "",
              at);
      ops.add(inv);
      ops.add(inv.complete(Op.Type.OK, Optional.of(holder), OptionalLong.of(token), value, at));
      return this;
    }

    Steps owned(String holder, String name, long token, long from, long until) {
      op("assign", name, holder, token, "ASSIGNED", from);
      validities.add(new Validity(holder, name, token, from, until));
      return this;
    }

    Steps write(String holder, String name, long token, boolean accepted, long at) {
      return op("partition-write", name, holder, token, accepted ? "ACCEPTED" : "REFUSED", at);
    }

    History build() {
      return History.empty().withOps(ops).withValidities(validities);
    }
  }

  /** a owns partition 0, hands it to b (larger token); a's late write is refused. */
  static Steps handoff() {
    return new Steps()
        .owned("a", P0, 10, 0, 100)
        .write("a", P0, 10, true, 50)
        .owned("b", P0, 20, 110, 200)
        .write("b", P0, 20, true, 150)
        .write("a", P0, 10, false, 160);
  }

  @Test
  void aHandoffWithALargerTokenAndTheFormerOwnersWriteRefusedPasses() {
    Verdict v = checker.check(handoff().build());
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
    assertTrue(v.summary().contains("2 of 3 fenced writes accepted"), v.toString());
  }

  @Test
  void twoOwnersOfAPartitionAtOnceAreCaught() {
    // The planted violation: c believed it owned partition 0 while b still did.
    Verdict v = checker.check(handoff().owned("c", P0, 30, 190, 300).build());
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(
        v.toString().contains("c (token 30) owned it from 190 while b (token 20) did until 200"),
        v.toString());
  }

  @Test
  void aFormerOwnersWriteThatWasAcceptedIsCaught() {
    Verdict v = checker.check(handoff().write("a", P0, 10, true, 170).build());
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.toString().contains("a former owner's write was not refused"), v.toString());
  }

  @Test
  void aTokenThatWentDownBetweenOwnersIsCaught() {
    Verdict v = checker.check(handoff().owned("c", P0, 15, 210, 300).build());
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(v.toString().contains("was assigned token 15 after"), v.toString());
  }

  @Test
  void aWriteWithATokenNeverAssignedIsCaughtAndOtherNamesAreIgnored() {
    Verdict v =
        checker.check(
            handoff()
                .write("z", P0, 99, true, 210)
                .owned("x", "lock/other", 1, 0, 500)
                .owned("y", "lock/other", 2, 10, 20)
                .build());
    assertEquals(Verdict.Result.INVALID, v.result());
    assertTrue(
        v.toString().contains("never assigned") && !v.toString().contains("lock/other"),
        v.toString());
  }
}
