package io.leasehold.server.raft;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.grpc.server.GrpcServices;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;

/**
 * Ratis over gRPC with Leasehold's log appender. Ratis takes an RPC type that is not one of its
 * own as the name of a class to instantiate, which is how a server gets a factory of its own:
 * {@link #configure}. Everything else (the wire protocol, the server and client RPC) is Ratis's
 * gRPC, unchanged. The appender:
 * <ul>
 *   <li>finds where a rejoining follower's log parts from the leader's in about log2(n) round
 *       trips ({@link ForkSearchingLogAppender});</li>
 *   <li>reports every answer it gets to the node's {@link LeadershipCheck};</li>
 *   <li>passes notices of a new commit index to the node's {@link CommitClock};</li>
 *   <li>reports the appends it builds and the answers it gets to the node's {@link ReplicationTrace}.</li>
 * </ul>
 * Ratis's server also gets the trace's interceptor, which reports appends and answers on the
 * follower's side.
 */
public final class LeaseholdRpcType implements RpcType {
  /**
   * Sets the RPC type in {@code properties}, hands {@code check}, {@code commits} and {@code trace}
   * to the factory through {@code parameters}, and puts the trace's interceptor on Ratis's server.
   */
  public static void configure(RaftProperties properties, Parameters parameters, LeadershipCheck check,
                               CommitClock commits, ReplicationTrace trace, Duration commitPushDelay) {
    RaftConfigKeys.Rpc.setType(properties, new LeaseholdRpcType());
    parameters.put(LeadershipCheck.PARAMETER, check, LeadershipCheck.class);
    parameters.put(CommitClock.PARAMETER, commits, CommitClock.class);
    parameters.put(ReplicationTrace.PARAMETER, trace, ReplicationTrace.class);
    parameters.put(PUSH_DELAY, commitPushDelay, Duration.class);
    GrpcConfigKeys.Server.setServicesCustomizer(parameters, (builder, types) -> customize(builder, types, trace));
  }

  static final String PUSH_DELAY = LeaseholdRpcType.class.getName() + ".pushDelay";

  /**
   * Ratis's server runs its handlers on the Netty event loop that read the message: they only
   * check the request and queue its entries for the log worker (or answer from memory), and the
   * hop to gRPC's executor was one more thread hand-off on every append, reply and forwarded
   * write, each costing more than the handler itself on a small machine. Ratis's own blocking
   * handlers (a vote's metadata sync, a snapshot chunk's write) are rare and short.
   */
  private static NettyServerBuilder customize(
      NettyServerBuilder builder, EnumSet<GrpcServices.Type> types, ReplicationTrace trace) {
    builder.directExecutor();
    return types.contains(GrpcServices.Type.SERVER) ? builder.intercept(trace.interceptor()) : builder;
  }

  @Override
  public String name() {
    return LeaseholdRpcType.class.getName();
  }

  @Override
  public RpcFactory newFactory(Parameters parameters) {
    return new Factory(parameters);
  }

  static final class Factory extends GrpcFactory {
    private final LeadershipCheck check;
    private final CommitClock commits;
    private final ReplicationTrace trace;
    private final Duration pushDelay;

    Factory(Parameters parameters) {
      super(parameters);
      this.check = parameters.getNonNull(LeadershipCheck.PARAMETER, LeadershipCheck.class);
      this.commits = parameters.getNonNull(CommitClock.PARAMETER, CommitClock.class);
      this.trace = parameters.getNonNull(ReplicationTrace.PARAMETER, ReplicationTrace.class);
      this.pushDelay = parameters.getNonNull(PUSH_DELAY, Duration.class);
    }

    @Override
    public LogAppender newLogAppender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
      LogAppender appender = new ForkSearchingLogAppender(server, new Reporting(state, check, trace), follower, commits, trace, pushDelay);
      check.register(appender);
      return appender;
    }
  }

  /**
   * The leader state an appender sees: Ratis's own, with every answer also reported to the check,
   * and every append built and answer got to the trace.
   */
  private record Reporting(LeaderState leader, LeadershipCheck check, ReplicationTrace trace) implements LeaderState {
    @Override
    public void onAppendEntriesReply(LogAppender appender, AppendEntriesReplyProto reply) {
      check.onReply(appender, reply);
      trace.replyReceived(appender.getFollowerId(), reply);
      leader.onAppendEntriesReply(appender, reply);
    }

    @Override
    public void restart(LogAppender appender) {
      leader.restart(appender);
    }

    @Override
    public AppendEntriesRequestProto newAppendEntriesRequestProto(FollowerInfo follower, List<LogEntryProto> entries,
                                                                  TermIndex previous, long callId) {
      AppendEntriesRequestProto request = leader.newAppendEntriesRequestProto(follower, entries, previous, callId);
      trace.appendBuilt(follower.getId(), request);
      return request;
    }

    @Override
    public void checkHealth(FollowerInfo follower) {
      leader.checkHealth(follower);
    }

    @Override
    public boolean onFollowerTerm(FollowerInfo follower, long followerTerm) {
      return leader.onFollowerTerm(follower, followerTerm);
    }

    @Override
    public void onFollowerCommitIndex(FollowerInfo follower, long commitIndex) {
      leader.onFollowerCommitIndex(follower, commitIndex);
    }

    @Override
    public void onFollowerSuccessAppendEntries(FollowerInfo follower) {
      leader.onFollowerSuccessAppendEntries(follower);
    }

    @Override
    public boolean isFollowerBootstrapping(FollowerInfo follower) {
      return leader.isFollowerBootstrapping(follower);
    }
  }
}
