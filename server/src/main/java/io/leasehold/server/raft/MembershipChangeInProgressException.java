package io.leasehold.server.raft;

/** Another membership change is still being committed: retry once it is. */
public class MembershipChangeInProgressException extends MembershipChangeException {
  public MembershipChangeInProgressException(String message, Throwable cause) {
    super(message, cause);
  }
}
