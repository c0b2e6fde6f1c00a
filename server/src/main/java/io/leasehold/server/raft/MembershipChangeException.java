package io.leasehold.server.raft;

/**
 * The leader refused a membership change (the configuration it was asked to change is not the one
 * it has, say).
 */
public class MembershipChangeException extends ConsensusException {
  public MembershipChangeException(String message, Throwable cause) {
    super(message, cause);
  }
}
