package io.leasehold.jepsen.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.leasehold.jepsen.history.History;
import org.junit.jupiter.api.Test;

class LinearizabilityCheckerTest {
  final LinearizabilityChecker checker = new LinearizabilityChecker("lock/", 1000, 1_000_000);

  Verdict.Result check(Histories h) {
    return checker.check(h.build()).result();
  }

  @Test
  void aSequentialLockHistoryIsLinearizable() {
    assertEquals(
        Verdict.Result.VALID,
        check(
            new Histories()
                .granted("a", "lock/x", 5, 0, 10)
                .read("lock/x", "a", 5, 11, 12)
                .conflict("b", "lock/x", "a", 5, 13, 14)
                .released("a", "lock/x", 5, 15, 16)
                .readNone("lock/x", 17, 18)
                .granted("b", "lock/x", 9, 19, 20)
                .notHeld("a", "lock/x", 5, 21, 22)));
  }

  @Test
  void expiryMayFreeAHeldNameAtAnyTime() {
    assertEquals(
        Verdict.Result.VALID,
        check(
            new Histories()
                .granted("a", "lock/x", 5, 0, 10)
                .readNone("lock/x", 11, 12)
                .granted("b", "lock/x", 9, 13, 14)));
  }

  @Test
  void concurrentOperationsMayLinearizeInEitherOrder() {
    // b's grant and a's release overlap: a released first, then b was granted.
    assertEquals(
        Verdict.Result.VALID,
        check(
            new Histories()
                .granted("a", "lock/x", 5, 0, 10)
                .granted("b", "lock/x", 9, 20, 40)
                .released("a", "lock/x", 5, 15, 45)));
  }

  @Test
  void aReadOfAReleasedLeaseAfterTheReleaseCompletedIsCaught() {
    assertEquals(
        Verdict.Result.INVALID,
        check(
            new Histories()
                .granted("a", "lock/x", 5, 0, 10)
                .released("a", "lock/x", 5, 11, 12)
                .read("lock/x", "a", 5, 13, 14)));
  }

  @Test
  void aConflictNamingAHolderThatNeverHeldTheNameIsCaught() {
    assertEquals(
        Verdict.Result.INVALID,
        check(
            new Histories()
                .granted("a", "lock/x", 5, 0, 10)
                .conflict("b", "lock/x", "c", 7, 11, 12)));
  }

  @Test
  void aGrantWhoseTokenGoesBackIsCaught() {
    assertEquals(
        Verdict.Result.INVALID,
        check(
            new Histories()
                .granted("a", "lock/x", 9, 0, 10)
                .released("a", "lock/x", 9, 11, 12)
                .granted("b", "lock/x", 5, 13, 14)));
  }

  @Test
  void twoReleasesOfOneLeaseCannotBothSucceed() {
    assertEquals(
        Verdict.Result.INVALID,
        check(
            new Histories()
                .granted("a", "lock/x", 5, 0, 10)
                .released("a", "lock/x", 5, 11, 12)
                .released("a", "lock/x", 5, 13, 14)));
  }

  @Test
  void anUnknownAcquisitionExplainsALeaseSeenLater() {
    assertEquals(
        Verdict.Result.VALID,
        check(
            new Histories()
                .acquireUnknown("a", "lock/x", 0)
                .read("lock/x", "a", 7, 50, 60)
                .conflict("b", "lock/x", "a", 7, 61, 62)));
  }

  /**
   * Seen in a real run: an acquisition timed out (unknown) but took effect; readers saw the lease;
   * then the holder acquired it again and got GRANTED with the same token. The later grant cannot
   * explain the earlier sightings; the unknown acquisition does.
   */
  @Test
  void aLeaseSeenBeforeItsHolderReacquiredItIsExplainedByTheEarlierUnknownAcquisition() {
    assertEquals(
        Verdict.Result.VALID,
        check(
            new Histories()
                .acquireUnknown("a", "lock/x", 0)
                .read("lock/x", "a", 7, 50, 60)
                .granted("a", "lock/x", 7, 70, 80)
                .read("lock/x", "a", 7, 90, 95)));
    // Without the unknown acquisition nothing explains the first sighting.
    assertEquals(
        Verdict.Result.INVALID,
        check(new Histories().read("lock/x", "a", 7, 50, 60).granted("a", "lock/x", 7, 70, 80)));
  }

  @Test
  void aLeaseSeenBeforeAnyAcquisitionCouldHaveMadeItIsCaught() {
    assertEquals(
        Verdict.Result.INVALID,
        check(new Histories().read("lock/x", "a", 7, 0, 10).acquireUnknown("a", "lock/x", 20)));
  }

  /**
   * Seen in CI: a process whose acquisition was unknown (and never took effect) then released the
   * name with a token it was never granted, answered NOT_HELD. That answer is no sighting of a
   * lease with that token; treating it as one turned the unknown acquisition into a grant of a
   * token older than the name's, and the history into a false INVALID.
   */
  @Test
  void aReleaseAnsweredNotHeldIsNoSightingOfTheTokenItNamed() {
    assertEquals(
        Verdict.Result.VALID,
        check(
            new Histories()
                .granted("b", "lock/x", 162, 0, 10)
                .acquireUnknown("a", "lock/x", 20)
                .notHeld("a", "lock/x", 1, 30, 40)
                .readNone("lock/x", 50, 60)));
    // A release answered RELEASED does show the lease: nothing but that unknown acquisition could
    // have granted a token 1 lower than b's, after b's grant — caught.
    assertEquals(
        Verdict.Result.INVALID,
        check(
            new Histories()
                .granted("b", "lock/x", 162, 0, 10)
                .acquireUnknown("a", "lock/x", 20)
                .released("a", "lock/x", 1, 30, 40)));
  }

  @Test
  void anUnseenUnknownAcquisitionChangesNothing() {
    History h =
        new Histories()
            .acquireUnknown("a", "lock/x", 0)
            .granted("b", "lock/x", 9, 10, 20)
            .readNone("lock/x", 30, 40)
            .build();
    assertEquals(Verdict.Result.VALID, checker.check(h).result());
  }

  @Test
  void aLongConcurrentHistoryFinishesWithinTheBudget() {
    Histories h = new Histories();
    long t = 0;
    long token = 1;
    for (int i = 0; i < 300; i++) {
      String holder = "p" + (i % 3);
      h.granted(holder, "lock/x", ++token, t, t + 30)
          .read("lock/x", holder, token, t + 5, t + 35)
          .released(holder, "lock/x", token, t + 31, t + 40);
      t += 41;
    }
    Verdict v = checker.check(h.build());
    assertEquals(Verdict.Result.VALID, v.result(), v.toString());
  }
}
