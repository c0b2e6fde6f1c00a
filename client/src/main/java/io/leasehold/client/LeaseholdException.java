package io.leasehold.client;

import io.grpc.Status;
import java.util.Optional;

/**
 * Base of the SDK's failures (unchecked). Business outcomes — a name held by someone else, a lease
 * no longer held on renewal — are values ({@link AcquireResult}, {@link LeaseState}), not
 * exceptions; an exception means the request could not be carried out.
 */
public class LeaseholdException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final transient Status.Code code;

  /**
   * A failure described by {@code message}.
   *
   * @param message what went wrong
   */
  public LeaseholdException(String message) {
    this(message, null, null);
  }

  /**
   * A failure described by {@code message}, caused by {@code cause}.
   *
   * @param message what went wrong
   * @param cause the failure that led to it (may be null)
   */
  public LeaseholdException(String message, Throwable cause) {
    this(message, null, cause);
  }

  /**
   * A failure with the gRPC status {@code code} it ended with (null if none).
   *
   * @param message what went wrong
   * @param code the gRPC status the call ended with (may be null)
   * @param cause the failure that led to it (may be null)
   */
  public LeaseholdException(String message, Status.Code code, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  /**
   * The gRPC status code behind this failure, when it came from the cluster.
   *
   * @return the status code, if any
   */
  public Optional<Status.Code> statusCode() {
    return Optional.ofNullable(code);
  }
}
