package io.leasehold.client;

import io.grpc.Status;
import java.util.Optional;

/**
 * The cluster refused the request as bad input ({@code INVALID_ARGUMENT}): a malformed name, a
 * non-positive TTL, a token that was never issued. The message is the cluster's, and starts with
 * the offending field, e.g. {@code "name: must be namespace/rest with both parts non-empty"}.
 * Retrying will not help.
 */
public class InvalidRequestException extends LeaseholdException {
  private static final long serialVersionUID = 1L;

  /**
   * The cluster refused the input; {@code message} is the cluster's, starting with the field.
   *
   * @param message what went wrong
   * @param cause the failure that led to it (may be null)
   */
  public InvalidRequestException(String message, Throwable cause) {
    super(message, Status.Code.INVALID_ARGUMENT, cause);
  }

  /**
   * The request field the cluster named, if the message starts with one.
   *
   * @return the field, if named
   */
  public Optional<String> field() {
    String m = getMessage();
    int colon = m == null ? -1 : m.indexOf(':');
    return colon > 0 && m.substring(0, colon).indexOf(' ') < 0
        ? Optional.of(m.substring(0, colon))
        : Optional.empty();
  }
}
