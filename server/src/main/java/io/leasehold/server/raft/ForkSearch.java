package io.leasehold.server.raft;

/**
 * Where a leader looks next for the point at which a follower's log parts from its own, one
 * INCONSISTENCY answer at a time.
 *
 * <p>A follower that does not hold the entry before the ones it is sent answers with the index it
 * wants next, which for a log that has the index but from another term is just one below what was
 * tried. Ratis steps back by that one entry per answer. A leader cut off from its followers keeps
 * appending the writes it is sent, so when it comes back as a follower it can hold hundreds of
 * entries that never committed, and each of them costs a round trip (plus, after ten answers in a
 * row, Ratis's error back-off of 1 s and then 5 s per round).
 *
 * <p>Here each answer that continues a walk backwards doubles the distance of the next step:
 * about log2(n) rounds for a tail of n entries. Stepping too far back costs little: entries the
 * follower already holds are sent again and skipped, and a follower asked for entries at or below
 * its commit index answers with its commit index + 1, which ends the walk (committed entries are
 * the same on every replica). The walk never goes below {@code floor}: the entries the follower is
 * known to match, and the start of the leader's log (below it only a snapshot can help, and Ratis
 * decides that by itself).
 */
final class ForkSearch {
  /** Caps the step so one answer never sends the leader back to the very start of a long log. */
  static final long MAX_STEP = 1L << 16;

  /** The next index to try, and whether the answer moved the search (a stuck one is not progress). */
  record Step(long nextIndex, boolean progressed) {}

  private long lastAnswer = -1;
  private long lastTried = -1;
  private long step = 1;

  /**
   * @param answered the index the follower asked for, after Ratis's own adjustment
   * @param floor the lowest index worth trying
   */
  synchronized Step next(long answered, long floor) {
    boolean progressed = answered != lastAnswer;
    // Below what was tried: the follower lacks the entry before it, so the walk goes on, faster.
    // At or above it (its commit index + 1, or its log end): take the answer and start over.
    step = lastTried >= 0 && answered < lastTried ? Math.min(step * 2, MAX_STEP) : 1;
    lastAnswer = answered;
    lastTried = answered <= floor ? answered : Math.max(floor, answered - (step - 1));
    return new Step(lastTried, progressed);
  }
}
