package io.leasehold.server.raft;

/**
 * The target did not take over leadership in time (it was catching up, or an election intervened);
 * retryable.
 */
public class LeadershipTransferException extends ConsensusException {
  public LeadershipTransferException(String message, Throwable cause) {
    super(message, cause);
  }
}
