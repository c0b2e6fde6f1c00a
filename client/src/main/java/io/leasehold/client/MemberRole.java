package io.leasehold.client;

/** A member's Raft role, as it answered for itself ({@link MemberStatus#role()}). */
public enum MemberRole {
  /** It leads the current term. */
  LEADER,
  /** It follows a leader, or waits for one. */
  FOLLOWER,
  /** It is running for leader. */
  CANDIDATE,
  /** It replicates the log without a vote. */
  LISTENER,
  /** It did not answer, or answered with a role newer than this SDK. */
  UNKNOWN
}
