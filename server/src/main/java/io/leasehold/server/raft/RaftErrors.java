package io.leasehold.server.raft;

import io.leasehold.statemachine.core.InvalidArgumentException;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.RaftException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.protocol.exceptions.ReadException;
import org.apache.ratis.protocol.exceptions.ReadIndexException;
import org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
import org.apache.ratis.protocol.exceptions.ResourceUnavailableException;
import org.apache.ratis.protocol.exceptions.SetConfigurationException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;

/**
 * Maps Ratis's exceptions to the node's own ({@link ConsensusException} and its kinds), keeping
 * each message and the original as the cause. Every future the seam hands out fails with one of
 * these, or with what was never Ratis's (bad input, overload, a plain I/O failure, a timeout of our
 * own), as it was.
 */
public final class RaftErrors {
  private RaftErrors() {}

  /** {@code f}, failing with {@link #map}'s answer instead of Ratis's exception. */
  public static <T> CompletableFuture<T> mapped(CompletableFuture<T> f) {
    CompletableFuture<T> out = new CompletableFuture<>();
    f.whenComplete(
        (value, error) -> {
          if (error == null) {
            out.complete(value);
            return;
          }
          Throwable cause = unwrap(error);
          Throwable ours = map(cause);
          out.completeExceptionally(ours == cause ? error : ours);
        });
    return out;
  }

  /**
   * The node's own exception for {@code t} (unwrapped from completion wrappers), or {@code t}'s
   * cause itself when it is not Ratis's. A state machine fault that carries bad input or a matter
   * of availability (a leader that could not confirm an older member's read, during a rolling
   * upgrade) is that, not a fault.
   */
  public static Throwable map(Throwable t) {
    Throwable cause = unwrap(t);
    if (cause instanceof StateMachineException sme && sme.getCause() != null) {
      Throwable inner = unwrap(sme.getCause());
      if (inner instanceof InvalidArgumentException) {
        return inner;
      }
      if (isUnavailable(inner)) {
        return map(inner);
      }
    }
    if (cause instanceof TimeoutIOException) {
      return new ConsensusTimeoutException(cause.getMessage(), cause);
    }
    if (!(cause instanceof RaftException)) {
      return cause;
    }
    if (cause instanceof NotLeaderException nle) {
      RaftPeer suggested = nle.getSuggestedLeader();
      return new ConsensusUnavailableException(
          cause.getMessage(), cause, suggested == null ? null : suggested.getId().toString());
    }
    if (isUnavailable(cause)) {
      return new ConsensusUnavailableException(cause.getMessage(), cause);
    }
    if (cause instanceof ReconfigurationInProgressException) {
      return new MembershipChangeInProgressException(cause.getMessage(), cause);
    }
    if (cause instanceof SetConfigurationException) {
      return new MembershipChangeException(cause.getMessage(), cause);
    }
    if (cause instanceof TransferLeadershipException) {
      return new LeadershipTransferException(cause.getMessage(), cause);
    }
    return new ConsensusFailureException(cause);
  }

  /**
   * No leader or no quorum, a closing node, no answer in time, or a node that could not be reached.
   */
  private static boolean isUnavailable(Throwable t) {
    return t instanceof NotLeaderException
        || t instanceof LeaderNotReadyException
        || t instanceof RaftRetryFailureException
        || t instanceof ReadIndexException
        || t instanceof ReadException
        // A replica behind the read's minimum index, or a node that does not host the group: a
        // group reached through its members asks again elsewhere until its deadline.
        || t instanceof org.apache.ratis.protocol.exceptions.StaleReadException
        || t instanceof org.apache.ratis.protocol.exceptions.GroupMismatchException
        || t instanceof ResourceUnavailableException
        || t instanceof AlreadyClosedException
        || t instanceof TimeoutException
        || t instanceof TimeoutIOException
        || t instanceof ConsensusUnavailableException
        || (t instanceof IOException
            && !(t instanceof RaftException)
            && !(t instanceof ConsensusException));
  }

  static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException)
        && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }
}
