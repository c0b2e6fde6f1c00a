package io.leasehold.grpc;

import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One instance of a service: a real gRPC server on a free port serving the standard health service,
 * counting its calls.
 */
final class Backend implements AutoCloseable {
  private final String name;
  private final Server server;
  private final AtomicInteger calls = new AtomicInteger();

  Backend(String name) throws IOException {
    this.name = name;
    ServerInterceptor counter =
        new ServerInterceptor() {
          @Override
          public <Q, R> ServerCall.Listener<Q> interceptCall(
              ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            calls.incrementAndGet();
            return next.startCall(call, headers);
          }
        };
    this.server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                ServerInterceptors.intercept(new HealthStatusManager().getHealthService(), counter))
            .build()
            .start();
  }

  /** The instance name it registers as. */
  String name() {
    return name;
  }

  /** The address it registers: {@code 127.0.0.1:<port>}. */
  String address() {
    return "127.0.0.1:" + server.getPort();
  }

  int port() {
    return server.getPort();
  }

  int calls() {
    return calls.get();
  }

  @Override
  public String toString() {
    return name + "@" + address() + " (" + calls() + " calls)";
  }

  @Override
  public void close() {
    try {
      server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
