package io.leasehold.server.raft;

import java.util.EnumSet;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.server.GrpcServices;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;

/**
 * What the node adds to Ratis's gRPC server, through Ratis's public services customizer ({@link
 * GrpcConfigKeys.Server#setServicesCustomizer}): the replication trace's, the fault hook's and the
 * append counter's interceptors. Ratis's protocol, its log appenders and its messages are its own,
 * unchanged.
 */
public final class RaftServerHooks {
  private RaftServerHooks() {}

  static void install(
      Parameters parameters, ReplicationTrace trace, PeerTraffic traffic, AppendCounter appends) {
    GrpcConfigKeys.Server.setServicesCustomizer(
        parameters, (builder, types) -> customize(builder, types, trace, traffic, appends));
  }

  /**
   * Interceptors only: Ratis's handlers keep gRPC's default executor. With append-entries compose
   * off ({@code RaftSettings}), a follower appends to its log on the thread that delivered the
   * request, and that thread may wait for room in the log worker's queue: never a Netty event
   * loop's. The fault hook is outermost, so the trace and the counter see only what reaches Ratis.
   */
  private static NettyServerBuilder customize(
      NettyServerBuilder builder,
      EnumSet<GrpcServices.Type> types,
      ReplicationTrace trace,
      PeerTraffic traffic,
      AppendCounter appends) {
    return types.contains(GrpcServices.Type.SERVER)
        ? builder
            .intercept(appends.interceptor())
            .intercept(trace.interceptor())
            .intercept(traffic.interceptor())
        : builder;
  }
}
