package io.leasehold.server.raft;

import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCall;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;

/**
 * Where a log entry's time goes on a follower: a diagnostic hook, like {@link CommitClock}, for the
 * latency benchmark. A follower hears of a commit only with an append or heartbeat sent after it;
 * this shows when each reached the follower, when it answered, and when it applied.
 *
 * <p>Each node has one. An interceptor on Ratis's server (installed through Ratis's public services
 * customizer, {@link RaftServerHooks}) reports each append as it reaches Ratis's service (after the
 * network and gRPC's hand-off) and each SUCCESS answer as Ratis hands it back to gRPC (after the
 * sync); every node reports each entry it applies (commands only: Ratis's configuration and
 * metadata entries do not reach the state machine). Times are {@link System#nanoTime}, so they
 * compare across nodes only within one JVM.
 *
 * <p>With no listener set, a report costs one volatile read.
 */
public final class ReplicationTrace {
  /** Called on Ratis's and gRPC's threads; must return quickly and never throw. */
  public interface Listener {
    /**
     * Follower: an append whose entries end at {@code lastIndex}, carrying the leader's commit
     * index {@code leaderCommit}, reached Ratis's service.
     */
    default void appendReceived(long lastIndex, long leaderCommit, long nanos) {}

    /**
     * Follower: an append without entries (a heartbeat) carrying the leader's commit index {@code
     * leaderCommit} reached Ratis's service.
     */
    default void commitReceived(long leaderCommit, long nanos) {}

    /** Follower: its SUCCESS answer naming {@code matchIndex} was handed to gRPC. */
    default void replySent(long matchIndex, long nanos) {}

    /**
     * Any node: its state machine applied the command in log entry {@code index} (Ratis's own
     * entries are not reported).
     */
    default void applied(long index, long nanos) {}
  }

  private static final String APPEND_METHOD_SUFFIX = "/appendEntries";

  private volatile Listener listener;

  /** Sets, or with null clears, the listener. */
  public void listen(Listener newListener) {
    listener = newListener;
  }

  /** From the node's apply path, after each applied entry. */
  public void applied(long index) {
    Listener l = listener;
    if (l != null) {
      l.applied(index, System.nanoTime());
    }
  }

  /**
   * For Ratis's server (as a follower): reports appends as they reach Ratis's service and answers
   * as they leave it.
   */
  ServerInterceptor interceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, A> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        if (!call.getMethodDescriptor().getFullMethodName().endsWith(APPEND_METHOD_SUFFIX)) {
          return next.startCall(call, headers);
        }
        ServerCall<Q, A> answers =
            new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
              @Override
              public void sendMessage(A message) {
                ReplicationTrace.Listener l = listener;
                if (l != null
                    && message instanceof AppendEntriesReplyProto reply
                    && reply.getResult() == AppendEntriesReplyProto.AppendResult.SUCCESS) {
                  l.replySent(reply.getMatchIndex(), System.nanoTime());
                }
                super.sendMessage(message);
              }
            };
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(
            next.startCall(answers, headers)) {
          @Override
          public void onMessage(Q message) {
            ReplicationTrace.Listener l = listener;
            if (l != null && message instanceof AppendEntriesRequestProto request) {
              int n = request.getEntriesCount();
              if (n > 0) {
                l.appendReceived(
                    request.getEntries(n - 1).getIndex(),
                    request.getLeaderCommit(),
                    System.nanoTime());
              } else {
                l.commitReceived(request.getLeaderCommit(), System.nanoTime());
              }
            }
            super.onMessage(message);
          }
        };
      }
    };
  }
}
