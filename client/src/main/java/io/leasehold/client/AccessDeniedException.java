package io.leasehold.client;

import io.grpc.Status;

/**
 * The cluster refused the call for who made it: no identity it accepts ({@code UNAUTHENTICATED}: no
 * or an unknown client certificate or token), or an identity without a role that allows it ({@code
 * PERMISSION_DENIED}: another holder's lease, a name outside its roles' prefixes, an admin action).
 * Retrying does not help; the message says what was missing.
 */
public class AccessDeniedException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /**
   * The cluster refused the caller: {@code code} is UNAUTHENTICATED (no identity it accepts) or
   * PERMISSION_DENIED (no role that allows the call).
   *
   * @param message what went wrong, as the cluster said
   * @param code UNAUTHENTICATED or PERMISSION_DENIED
   * @param cause the failure that led to it (may be null)
   */
  public AccessDeniedException(String message, Status.Code code, Throwable cause) {
    super(message, code, cause);
  }
}
