package io.leasehold.server.raft;

/**
 * Any other failure of the consensus layer: not a matter of availability, not a refusal the caller
 * can act on. It describes itself as the failure it stands for, so what an operator reads in an
 * INTERNAL status is the original's own account.
 */
public class ConsensusFailureException extends ConsensusException {
  private final String description;

  public ConsensusFailureException(Throwable cause) {
    super(cause.getMessage(), cause);
    this.description = String.valueOf(cause);
  }

  @Override
  public String toString() {
    return description;
  }
}
