package io.leasehold.server.raft;

import static io.leasehold.server.raft.ForkSearchingLogAppender.pushDue;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * When the leader pushes a commit index to a follower ({@link ForkSearchingLogAppender#pushDue}),
 * step by step through the exchanges of one write on an idle three-node cluster, as recorded with
 * the node's replication trace. Entry 9 is sent to both followers while the commit index is 8;
 * the other follower's acknowledgement commits 9; this follower is the slower one.
 */
class PushDueTest {
  @Test
  void aNewCommitIndexIsPushedAndNothingElse() {
    assertTrue(pushDue(9, 8, 8, 8, false), "the commit index moved past the last push");
    assertFalse(pushDue(9, 8, 9, 9, true), "the follower already reports it");
    assertFalse(pushDue(8, 8, 8, 9, true), "nothing new");
  }

  /** The push overtook the follower's sync: it took less than the push carried, and answered first. */
  @Test
  void aPushThatReachedTheFollowerBeforeItsSyncIsRepeatedOnceItHasAcknowledgedTheEntry() {
    // Push 1 (carrying 9) is in flight: no second one.
    assertFalse(pushDue(9, 9, 8, 8, false));
    // Its answer comes first (it did not wait for the sync): commit index 8, the cap of its sync.
    assertFalse(pushDue(9, 9, 8, 8, true), "the follower has acknowledged nothing beyond 8 yet");
    // Then the append's answer: the follower holds 9, synced, and still reports 8.
    assertTrue(pushDue(9, 9, 8, 9, true), "pushed again");
    // Push 2 is in flight, then answered with 9.
    assertFalse(pushDue(9, 9, 8, 9, false));
    assertFalse(pushDue(9, 9, 9, 9, true));
  }

  /** The usual case: the follower had synced when the push came, so the push gave it everything. */
  @Test
  void aPushThatReachedTheFollowerAfterItsSyncIsNotRepeated() {
    // The append's answer first: 9 held, commit index 8; the push's answer is still coming.
    assertFalse(pushDue(9, 9, 8, 9, false), "waits for the push's own answer");
    assertFalse(pushDue(9, 9, 9, 9, true));
  }
}
