package io.leasehold.server.raft;

import java.io.IOException;

/**
 * A failure of the consensus layer, in this node's own terms: the seam maps each of Raft's
 * exceptions to one of these ({@link RaftErrors}), so nothing outside this package needs to know
 * Raft's types to tell "retry elsewhere" from "refused" from "broken". The original is the cause.
 */
public class ConsensusException extends IOException {
  public ConsensusException(String message, Throwable cause) {
    super(message, cause);
  }
}
