package io.leasehold.client;

import io.grpc.Status;

/**
 * No node could carry out the request within the client's request timeout, after retrying with
 * backoff on every endpoint (nodes down, no leader, or overloaded). The outcome of a write that
 * failed this way is unknown: it may or may not have been applied. Its subclass {@link
 * ConnectionFailedException} says the client could not connect to any endpoint for a reason it can
 * name (a host name that does not resolve, TLS settings that do not match the nodes'), and comes at
 * once.
 */
public class ClusterUnavailableException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /**
   * No node could do it in time; {@code lastCode} is the last attempt's gRPC status.
   *
   * @param message what went wrong
   * @param lastCode the last attempt's gRPC status
   * @param cause the failure that led to it (may be null)
   */
  public ClusterUnavailableException(String message, Status.Code lastCode, Throwable cause) {
    super(message, lastCode, cause);
  }
}
