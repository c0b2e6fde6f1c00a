package io.leasehold.server;

import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.BindableService;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.leasehold.proto.Lz4BlockCodec;
import io.leasehold.server.api.AcquireWaits;
import io.leasehold.server.api.AdminService;
import io.leasehold.server.api.AuthService;
import io.leasehold.server.api.ClusterService;
import io.leasehold.server.api.LeasesService;
import io.leasehold.server.api.RegistryService;
import io.leasehold.server.api.RequestLimits;
import io.leasehold.server.api.RoutingService;
import io.leasehold.server.api.ServiceWaits;
import io.leasehold.server.api.StrictProtobuf;
import io.leasehold.server.auth.NodeAuth;
import io.leasehold.server.health.NodeHealth;
import io.leasehold.server.raft.Consensus;
import io.leasehold.server.rpc.RoutingHeaders;
import io.leasehold.server.tls.NodeTls;
import io.leasehold.server.watch.WatchService;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The gRPC API on the client port: the Leasehold services behind their interceptors, health and
 * reflection.
 */
final class ApiServer {
  /**
   * The shortest interval at which a client may send keepalive PINGs on the client port (as etcd's
   * {@code --grpc-keepalive-min-time}), with or without calls open. grpc-java's server default is 5
   * minutes: an SDK user whose channel keepalive is shorter (the client builder's channel
   * customizer allows it) would get GOAWAY {@code too_many_pings} and lose the connection.
   */
  static final Duration MIN_CLIENT_KEEPALIVE = Duration.ofSeconds(5);

  /** The Leasehold services, whose health the health service reports. */
  static final List<String> SERVICES =
      List.of(
          "leasehold.v1.Leases",
          "leasehold.v1.Routing",
          "leasehold.v1.Registry",
          "leasehold.v1.Cluster",
          "leasehold.v1.Admin",
          "leasehold.v1.Auth");

  /** The calls that run on the Netty event loop that read them ({@link #callExecutor}). */
  private static final Set<String> ON_EVENT_LOOP =
      Set.of(
          "leasehold.v1.Leases/Acquire",
          "leasehold.v1.Leases/Renew",
          "leasehold.v1.Leases/Release",
          "leasehold.v1.Leases/Update",
          "leasehold.v1.Leases/Get",
          "leasehold.v1.Registry/Register",
          "leasehold.v1.Registry/Deregister",
          "leasehold.v1.Registry/SetStatus");

  private final RequestLimits requestLimits;
  private final NodeAuth auth;
  private final Server server;
  private final RoutingHeaders routingHeaders;

  ApiServer(
      NodeConfig config,
      NodeTls tls,
      Consensus consensus,
      WatchService hub,
      AcquireWaits acquireWaits,
      ServiceWaits serviceWaits,
      NodeAuth auth,
      RequestLimits requestLimits,
      NodeHealth health,
      ClusterService cluster,
      Supplier<Optional<String>> leaderHint,
      LongSupplier wallClockMicros) {
    this.requestLimits = requestLimits;
    this.auth = auth;
    this.routingHeaders =
        new RoutingHeaders(consensus::isLeader, leaderHint, consensus::placementVersion);
    this.server =
        NettyServerBuilder.forAddress(
                new InetSocketAddress(config.bindHost(), config.self().clientPort()),
                tls.clientPort().orElseGet(InsecureServerCredentials::create))
            // Without PINGs a connection whose client machine died, or whose client stopped
            // reading,
            // lives until TCP gives up (hours), and its Watch streams stay registered in the hub as
            // long as no events push them over the lag limit. An unanswered PING closes it and
            // cancels its calls. And clients may ping as often as MIN_CLIENT_KEEPALIVE.
            .keepAliveTime(nanos(config.grpcKeepaliveInterval()), TimeUnit.NANOSECONDS)
            .keepAliveTimeout(nanos(config.grpcKeepaliveTimeout()), TimeUnit.NANOSECONDS)
            .permitKeepAliveTime(nanos(MIN_CLIENT_KEEPALIVE), TimeUnit.NANOSECONDS)
            .permitKeepAliveWithoutCalls(true)
            .callExecutor(ApiServer::callExecutor)
            // Limits against abuse (docs/operations.md, "Limits"): gRPC refuses larger requests and
            // headers with RESOURCE_EXHAUSTED before anything reads them.
            .maxInboundMessageSize(config.limits().requestBytes())
            .maxInboundMetadataSize(config.limits().metadataBytes())
            .addTransportFilter(requestLimits.connectionIds())
            // Watch streams are compressed with lz4-block for clients that accept it
            // (LeasesService).
            .compressorRegistry(Lz4BlockCodec.compressors())
            .addService(
                guarded(
                    new LeasesService(consensus, hub, acquireWaits, leaderHint)
                        .serviceDefinition()))
            .addService(guarded(new RoutingService(consensus, leaderHint).bindService()))
            .addService(
                guarded(new RegistryService(consensus, leaderHint, serviceWaits).bindService()))
            .addService(guarded(cluster.bindService()))
            .addService(
                guarded(new AdminService(consensus, leaderHint, wallClockMicros).bindService()))
            .addService(guarded(new AuthService(consensus, leaderHint, auth).bindService()))
            .addService(health.service())
            .addService(ProtoReflectionServiceV1.newInstance())
            .addService(reflectionV1Alpha())
            .build();
  }

  void start() throws IOException {
    server.start();
  }

  /** The names of the gRPC services served on the client port. */
  List<String> servedServices() {
    return server.getServices().stream().map(d -> d.getServiceDescriptor().getName()).toList();
  }

  void shutdownNow() {
    server.shutdownNow();
  }

  void awaitTermination() {
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * A Leasehold service as served: every call passes the authorization point, which sees the
   * request parsed (and strictly: a malformed body is INVALID_ARGUMENT, {@link StrictProtobuf}),
   * then the limits against abuse, which see only authorized calls and their caller. A follower's
   * responses name the leader, and with lease groups every response says the placement table's
   * version ({@link RoutingHeaders}).
   */
  private ServerServiceDefinition guarded(ServerServiceDefinition service) {
    // The last interceptor listed runs first.
    return StrictProtobuf.wrap(
        ServerInterceptors.intercept(service, requestLimits, auth.authorizer(), routingHeaders));
  }

  /**
   * Writes (and single-name reads) only check their request and hand it on without blocking, so
   * they run where gRPC read them: the hop to gRPC's executor was one more thread hand-off per
   * call, which on a small machine cost more than the handler. Streams, listings, admin and cluster
   * calls, which may read much or wait, keep the executor.
   */
  private static Executor callExecutor(ServerCall<?, ?> call, Metadata headers) {
    return ON_EVENT_LOOP.contains(call.getMethodDescriptor().getFullMethodName())
        ? MoreExecutors.directExecutor()
        : null;
  }

  /** grpcurl and older tools still ask for the v1alpha reflection service. */
  @SuppressWarnings("deprecation")
  private static BindableService reflectionV1Alpha() {
    return ProtoReflectionService.newInstance();
  }

  /** For gRPC's builder, which takes anything longer than about 1,000 days as "never". */
  private static long nanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException beyond292Years) {
      return Long.MAX_VALUE;
    }
  }
}
