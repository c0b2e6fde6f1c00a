package io.leasehold.server.raft;

import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCall;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;

/**
 * Where a log entry's time goes between the leader and a follower: a diagnostic hook, like
 * {@link CommitClock}, for the latency benchmark. A follower hears of a commit only with an
 * append sent after it: an append with entries, whose commit index Ratis takes only once the
 * follower's log has synced those entries, or one without (a commit push,
 * {@link ForkSearchingLogAppender}), whose commit index it takes at once. This shows how long each
 * of those steps took.
 *
 * <p>Each node has one. On the leader, the log appenders report each AppendEntries they build and
 * each answer ({@link LeaseholdRpcType}); on a follower, an interceptor on Ratis's server reports
 * each append as it reaches Ratis's service (after the network and gRPC's hand-off) and each
 * SUCCESS answer as Ratis hands it back to gRPC (after the sync); every node reports each entry it
 * applies (commands only: Ratis's configuration and metadata entries do not reach the state
 * machine). Times are {@link System#nanoTime}, so they compare across nodes only within one JVM.
 *
 * <p>With no listener set, a report costs one volatile read.
 */
public final class ReplicationTrace {
  /** Called on Ratis's and gRPC's threads; must return quickly and never throw. */
  public interface Listener {
    /**
     * Leader: an AppendEntries for {@code followerId} was built, carrying the leader's commit
     * index {@code leaderCommit}; its entries end at {@code lastIndex} (a heartbeat has none:
     * {@code lastIndex} is then its previous entry's index, or -1 for none).
     */
    default void appendBuilt(String followerId, long leaderCommit, long lastIndex, boolean heartbeat, long nanos) {
    }

    /**
     * Leader: the append without entries just reported to {@link #appendBuilt} is a commit push
     * ({@link ForkSearchingLogAppender}) naming entry {@code previousIndex}; the others without
     * entries are Ratis's own heartbeats.
     */
    default void pushBuilt(String followerId, long leaderCommit, long previousIndex, long nanos) {
    }

    /** Leader: {@code followerId} answered an append with SUCCESS, naming {@code matchIndex}. */
    default void replyReceived(String followerId, long matchIndex, long nanos) {
    }

    /**
     * Leader: {@code followerId} refused an append or heartbeat, with {@code result}
     * (INCONSISTENCY, NOT_LEADER) and the next index it asked for.
     */
    default void replyRefused(String followerId, String result, long nextIndex, long nanos) {
    }

    /** Follower: an append whose entries end at {@code lastIndex} reached Ratis's service. */
    default void appendReceived(long lastIndex, long nanos) {
    }

    /**
     * Follower: an append without entries (a heartbeat, or a commit push from
     * {@link ForkSearchingLogAppender}) carrying the leader's commit index {@code leaderCommit}
     * reached Ratis's service.
     */
    default void commitReceived(long leaderCommit, long nanos) {
    }

    /** Follower: its SUCCESS answer naming {@code matchIndex} was handed to gRPC. */
    default void replySent(long matchIndex, long nanos) {
    }

    /** Any node: its state machine applied the command in log entry {@code index} (Ratis's own entries are not reported). */
    default void applied(long index, long nanos) {
    }
  }

  static final String PARAMETER = ReplicationTrace.class.getName();
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

  void appendBuilt(RaftPeerId followerId, AppendEntriesRequestProto request) {
    Listener l = listener;
    if (l == null) {
      return;
    }
    int n = request.getEntriesCount();
    long last = n > 0 ? request.getEntries(n - 1).getIndex()
        : request.hasPreviousLog() ? request.getPreviousLog().getIndex() : -1;
    l.appendBuilt(followerId.toString(), request.getLeaderCommit(), last, n == 0, System.nanoTime());
  }

  void pushBuilt(RaftPeerId followerId, AppendEntriesRequestProto push) {
    Listener l = listener;
    if (l != null) {
      l.pushBuilt(followerId.toString(), push.getLeaderCommit(), push.getPreviousLog().getIndex(), System.nanoTime());
    }
  }

  void replyReceived(RaftPeerId followerId, AppendEntriesReplyProto reply) {
    Listener l = listener;
    if (l == null) {
      return;
    }
    if (reply.getResult() == AppendEntriesReplyProto.AppendResult.SUCCESS) {
      l.replyReceived(followerId.toString(), reply.getMatchIndex(), System.nanoTime());
    } else {
      l.replyRefused(followerId.toString(), reply.getResult().name(), reply.getNextIndex(), System.nanoTime());
    }
  }

  /** For Ratis's server (as a follower): reports appends as they reach Ratis's service and answers as they leave it. */
  ServerInterceptor interceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        if (!call.getMethodDescriptor().getFullMethodName().endsWith(APPEND_METHOD_SUFFIX)) {
          return next.startCall(call, headers);
        }
        ServerCall<Q, A> answers = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void sendMessage(A message) {
            ReplicationTrace.Listener l = listener;
            if (l != null && message instanceof AppendEntriesReplyProto reply
                && reply.getResult() == AppendEntriesReplyProto.AppendResult.SUCCESS) {
              l.replySent(reply.getMatchIndex(), System.nanoTime());
            }
            super.sendMessage(message);
          }
        };
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(answers, headers)) {
          @Override
          public void onMessage(Q message) {
            ReplicationTrace.Listener l = listener;
            if (l != null && message instanceof AppendEntriesRequestProto request) {
              int n = request.getEntriesCount();
              if (n > 0) {
                l.appendReceived(request.getEntries(n - 1).getIndex(), System.nanoTime());
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
