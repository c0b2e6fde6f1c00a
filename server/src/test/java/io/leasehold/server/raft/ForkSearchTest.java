package io.leasehold.server.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ForkSearchTest {
  /**
   * Plays a follower whose log holds the leader's entries up to {@code fork} and other entries up
   * to {@code followerEnd}; answers as Ratis's follower does: min(its next index, previous index).
   * Returns the rounds the leader needs until the entry before what it sends matches.
   */
  private static int roundsToFind(long fork, long followerEnd, long leaderNext, long commit) {
    ForkSearch search = new ForkSearch();
    long next = leaderNext;
    int rounds = 0;
    while (true) {
      long previous = next - 1;
      if (previous <= fork) {
        return rounds;
      }
      rounds++;
      long answer = previous <= commit ? commit + 1 : Math.min(followerEnd + 1, previous);
      next = search.next(answer, 1).nextIndex();
      assertTrue(rounds < 10_000, "the search does not end");
    }
  }

  @Test
  void aTailOfNEntriesTakesAboutLog2NRounds() {
    assertEquals(1, roundsToFind(1_000, 1_001, 1_002, 1_000));
    int rounds = roundsToFind(10_000, 10_400, 10_420, 10_000);
    assertTrue(rounds <= 11, "rounds: " + rounds);
    int big = roundsToFind(10_000, 110_000, 110_500, 10_000);
    assertTrue(big <= 20, "rounds: " + big);
  }

  @Test
  void anOvershootBelowTheFollowersCommitIsAnsweredWithItsCommitAndEndsTheWalk() {
    ForkSearch search = new ForkSearch();
    assertEquals(500, search.next(500, 1).nextIndex());
    assertEquals(498, search.next(499, 1).nextIndex());
    assertEquals(494, search.next(497, 1).nextIndex());
    // The follower's commit is 495: sending from 494 is answered with 496. The step starts over.
    ForkSearch.Step back = search.next(496, 1);
    assertEquals(496, back.nextIndex());
    assertTrue(back.progressed());
  }

  @Test
  void neverBelowTheFloor() {
    ForkSearch search = new ForkSearch();
    long next = 1_000;
    while (next > 900) {
      next = search.next(next - 1, 900).nextIndex();
      assertTrue(next >= 900, "next " + next);
    }
    // At or below the floor the answer is taken as it is (Ratis then decides on a snapshot).
    assertEquals(850, search.next(850, 900).nextIndex());
  }

  @Test
  void theSameAnswerAgainIsNoProgress() {
    ForkSearch search = new ForkSearch();
    assertTrue(search.next(700, 1).progressed());
    ForkSearch.Step again = search.next(700, 1);
    assertFalse(again.progressed());
    assertEquals(700, again.nextIndex());
  }

  @Test
  void aFollowerThatIsMerelyBehindIsAskedFromItsOwnEnd() {
    // The follower's log ends at 300 with nothing foreign; the leader is at 5,000.
    ForkSearch search = new ForkSearch();
    assertEquals(301, search.next(301, 1).nextIndex());
  }
}
