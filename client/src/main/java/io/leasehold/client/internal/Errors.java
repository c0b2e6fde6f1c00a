package io.leasehold.client.internal;

import io.grpc.Metadata;
import io.grpc.Status;
import io.leasehold.client.AccessDeniedException;
import io.leasehold.client.ClusterUnavailableException;
import io.leasehold.client.InvalidRequestException;
import io.leasehold.client.LeaseholdException;

/** How the SDK reads gRPC failures: which may pass with a retry, and what the caller sees. */
public final class Errors {
  private Errors() {}

  /** The leader's client address, which a node adds to an UNAVAILABLE reply when it knows it. */
  public static final Metadata.Key<String> LEADER_HINT =
      Metadata.Key.of("leasehold-leader", Metadata.ASCII_STRING_MARSHALLER);

  /** On a cluster with lease groups: the version of the placement table the node answered with. */
  public static final Metadata.Key<String> PLACEMENT_VERSION =
      Metadata.Key.of("leasehold-placement-version", Metadata.ASCII_STRING_MARSHALLER);

  public static final Metadata.Key<String> COMPACT_REVISION =
      Metadata.Key.of("leasehold-compact-revision", Metadata.ASCII_STRING_MARSHALLER);

  /**
   * Failures worth retrying, on another node or after a backoff: the node is down or stopping, has
   * no leader, is overloaded, or did not answer in time. CANCELLED counts too: a node that shuts
   * down cancels its calls (the SDK never retries calls its caller cancelled).
   */
  public static boolean retryable(Status.Code code) {
    return switch (code) {
      case UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, ABORTED, CANCELLED -> true;
      default -> false;
    };
  }

  /** Failures that say this node, not the request, is the problem: try another endpoint. */
  public static boolean nodeTrouble(Status.Code code) {
    return code == Status.Code.UNAVAILABLE
        || code == Status.Code.DEADLINE_EXCEEDED
        || code == Status.Code.CANCELLED;
  }

  /** The exception a caller sees for a final failure of {@code what} (e.g. "Acquire lock/x"). */
  public static LeaseholdException toException(
      String what, Status status, boolean retriesExhausted) {
    String detail =
        status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription());
    if (status.getCode() == Status.Code.INVALID_ARGUMENT) {
      return new InvalidRequestException(
          status.getDescription() == null ? what + ": invalid request" : status.getDescription(),
          status.asRuntimeException());
    }
    if (status.getCode() == Status.Code.PERMISSION_DENIED
        || status.getCode() == Status.Code.UNAUTHENTICATED) {
      return new AccessDeniedException(
          what + ": " + detail, status.getCode(), status.asRuntimeException());
    }
    if (retryable(status.getCode())) {
      return new ClusterUnavailableException(
          what
              + ": the cluster did not answer"
              + (retriesExhausted ? " within the request timeout" : "")
              + "; last error "
              + detail,
          status.getCode(),
          status.asRuntimeException());
    }
    return new LeaseholdException(
        what + ": " + detail, status.getCode(), status.asRuntimeException());
  }
}
