package io.leasehold.server.raft;

/**
 * No answer in time. Unlike other unavailability the outcome is unknown: a leader may hold a quorum
 * and be slow, and a write that timed out may still commit.
 */
public class ConsensusTimeoutException extends ConsensusUnavailableException {
  public ConsensusTimeoutException(String message, Throwable cause) {
    super(message, cause);
  }
}
