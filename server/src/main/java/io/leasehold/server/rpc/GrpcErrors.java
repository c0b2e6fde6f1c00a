package io.leasehold.server.rpc;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.server.OverloadedException;
import io.leasehold.server.raft.ConsensusException;
import io.leasehold.server.raft.ConsensusTimeoutException;
import io.leasehold.server.raft.ConsensusUnavailableException;
import io.leasehold.server.raft.RaftErrors;
import io.leasehold.statemachine.core.InvalidArgumentException;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * Maps failures to gRPC statuses: bad input is INVALID_ARGUMENT naming the field; no leader or no
 * quorum is UNAVAILABLE (retry elsewhere or later); anything else is INTERNAL. It knows the
 * consensus layer only by the node's own exceptions ({@link ConsensusException} and its kinds), to
 * which the seam in {@code raft} maps Raft's.
 */
public final class GrpcErrors {
  private GrpcErrors() {}

  /** Trailer with the leader's client address, when this node knows it. */
  public static final Metadata.Key<String> LEADER_HINT =
      Metadata.Key.of("leasehold-leader", Metadata.ASCII_STRING_MARSHALLER);

  public static StatusRuntimeException invalid(InvalidArgumentException e) {
    return Status.INVALID_ARGUMENT.withDescription(bounded(e.getMessage())).asRuntimeException();
  }

  public static StatusRuntimeException invalid(String field, String message) {
    return Status.INVALID_ARGUMENT
        .withDescription(bounded(message.startsWith(field) ? message : field + ": " + message))
        .asRuntimeException();
  }

  /** The most characters of a description sent; see {@link #bounded}. */
  static final int MAX_DESCRIPTION_CHARS = 1024;

  /**
   * A description cut to {@link #MAX_DESCRIPTION_CHARS}. It travels in the grpc-message trailer,
   * percent-encoded, and clients take at most 8 KiB of headers by default: a message that quoted a
   * long argument whole (a 36,000-character member id) reached the client as a broken stream,
   * INTERNAL, instead of the INVALID_ARGUMENT it was.
   */
  public static String bounded(String description) {
    return description == null || description.length() <= MAX_DESCRIPTION_CHARS
        ? description
        : description.substring(0, MAX_DESCRIPTION_CHARS - 3) + "...";
  }

  /**
   * The status for a failure. The seam hands out the node's own exceptions; one of Raft's that
   * reached here on another path is mapped the same way first ({@link RaftErrors#map}).
   */
  public static StatusRuntimeException toStatus(Throwable t, Optional<String> leaderHint) {
    Throwable cause = RaftErrors.map(unwrap(t));
    if (cause instanceof StatusRuntimeException s) {
      return s;
    }
    if (cause instanceof InvalidArgumentException e) {
      return invalid(e);
    }
    if (cause instanceof OverloadedException) {
      return Status.RESOURCE_EXHAUSTED.withDescription(cause.getMessage()).asRuntimeException();
    }
    if (isUnavailable(cause)) {
      Metadata trailers = new Metadata();
      leaderHint.ifPresent(h -> trailers.put(LEADER_HINT, h));
      return Status.UNAVAILABLE
          .withDescription(
              unavailableBecause(cause)
                  + cause.getMessage()
                  + leaderHint.map(h -> " (last known leader at " + h + ")").orElse(""))
          .withCause(cause)
          .asRuntimeException(trailers);
    }
    return Status.INTERNAL
        .withDescription(String.valueOf(cause))
        .withCause(cause)
        .asRuntimeException();
  }

  /**
   * A timeout is not "no leader": a leader may well hold a quorum and be slow, and a write that
   * timed out may still commit. Saying so tells the operator where to look, and the caller that the
   * outcome is unknown. (The SDK retries it: it sends only writes that are safe to repeat; its
   * {@code Calls} says why for each.)
   */
  private static String unavailableBecause(Throwable cause) {
    if (isTimeout(cause)) {
      return "no answer from the cluster in time (a write may still take effect): ";
    }
    return "no leader reachable with a quorum: ";
  }

  private static boolean isUnavailable(Throwable t) {
    return t instanceof ConsensusUnavailableException
        || isTimeout(t)
        || (t instanceof IOException && !(t instanceof ConsensusException));
  }

  private static boolean isTimeout(Throwable t) {
    return t instanceof TimeoutException || t instanceof ConsensusTimeoutException;
  }

  private static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException)
        && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }
}
