package io.leasehold.server.raft;

import java.util.Optional;

/**
 * No leader with a quorum could take the request: this node does not lead and knows no leader, the
 * leader is not ready yet or is stepping out, a read could not be confirmed with a majority, or the
 * node is closing. Nothing was applied by this attempt; the caller may retry elsewhere or later.
 */
public class ConsensusUnavailableException extends ConsensusException {
  private final String leaderId;

  public ConsensusUnavailableException(String message, Throwable cause) {
    this(message, cause, null);
  }

  /**
   * @param leaderId the member the refusing node named as leader, or null
   */
  public ConsensusUnavailableException(String message, Throwable cause, String leaderId) {
    super(message, cause);
    this.leaderId = leaderId;
  }

  /** The member the refusing node suggested as leader, if it named one. */
  public Optional<String> leaderId() {
    return Optional.ofNullable(leaderId);
  }
}
