package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.jepsen.history.History;
import io.leasehold.jepsen.history.Op;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class RenewalCheckerTest {
  static final long MS = 1_000_000;
  final List<Op> ops = new ArrayList<>();
  long ids;

  private RenewalCheckerTest op(
      int p,
      String f,
      String key,
      String holder,
      Long token,
      long from,
      Op.Type type,
      String seenHolder,
      Long seenToken,
      String value,
      long to) {
    Op inv =
        new Op(
            ++ids,
            p,
            Op.Type.INVOKE,
            f,
            key,
            Optional.ofNullable(holder),
            token == null ? OptionalLong.empty() : OptionalLong.of(token),
            "",
            from * MS);
    ops.add(inv);
    ops.add(
        inv.complete(
            type,
            Optional.ofNullable(seenHolder),
            seenToken == null ? OptionalLong.empty() : OptionalLong.of(seenToken),
            value,
            to * MS));
    return this;
  }

  private RenewalCheckerTest renewed(long from, long to) {
    return op(
        300,
        "renew",
        "lock/edge-0",
        "edge-0",
        7L,
        from,
        Op.Type.OK,
        "edge-0",
        7L,
        "RENEWED ttl=2000ms",
        to);
  }

  private RenewalCheckerTest found(long from, long to) {
    return op(300, "get", "lock/edge-0", null, null, from, Op.Type.OK, "edge-0", 7L, "FOUND", to);
  }

  private RenewalCheckerTest none(long from, long to) {
    return op(300, "get", "lock/edge-0", null, null, from, Op.Type.OK, null, null, "NONE", to);
  }

  private Verdict.Result check() {
    return new RenewalChecker()
        .check(
            new History(
                ops,
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                io.leasehold.jepsen.history.FinalState.none()))
        .result();
  }

  @Test
  void aRenewedLeaseReadWithinItsTtlIsValid() {
    renewed(0, 10).found(11, 20).found(400, 420);
    assertEquals(Verdict.Result.VALID, check());
  }

  /** What a missing Expire guard does: the Expire that raced the renewal ends the lease anyway. */
  @Test
  void aRenewedLeaseGoneWithinItsTtlIsCaught() {
    renewed(0, 10).found(11, 20).none(400, 420);
    assertEquals(Verdict.Result.INVALID, check());
  }

  @Test
  void aLeaseHeldByAnotherTokenWithinTheTtlIsCaught() {
    renewed(0, 10)
        .op(300, "get", "lock/edge-0", null, null, 400, Op.Type.OK, "edge-0", 9L, "FOUND", 420);
    assertEquals(Verdict.Result.INVALID, check());
  }

  @Test
  void aReadCompletingAfterTheTtlRanOutMayFindNothing() {
    renewed(0, 10).none(1990, 2000);
    assertEquals(Verdict.Result.VALID, check());
  }

  @Test
  void aReleaseByTheProcessEndsThePromise() {
    renewed(0, 10)
        .op(
            300,
            "release",
            "lock/edge-0",
            "edge-0",
            7L,
            20,
            Op.Type.OK,
            "edge-0",
            7L,
            "RELEASED",
            30)
        .none(40, 50);
    assertEquals(Verdict.Result.VALID, check());
  }

  @Test
  void aRenewalAnsweredNotHeldPromisesNothing() {
    op(300, "renew", "lock/edge-0", "edge-0", 7L, 0, Op.Type.OK, "edge-0", 7L, "NOT_HELD", 10)
        .none(11, 20);
    assertEquals(Verdict.Result.VALID, check());
  }

  @Test
  void anUnknownRenewalPromisesNothing() {
    op(
            300,
            "renew",
            "lock/edge-0",
            "edge-0",
            7L,
            0,
            Op.Type.INFO,
            "edge-0",
            7L,
            "DEADLINE_EXCEEDED",
            10)
        .none(11, 20);
    assertEquals(Verdict.Result.VALID, check());
  }

  @Test
  void aHistoryWithoutRenewalsIsUnknown() {
    none(0, 10);
    assertEquals(Verdict.Result.UNKNOWN, check());
  }
}
