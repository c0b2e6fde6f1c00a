package io.leasehold.client.internal;

import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.leasehold.proto.Lz4BlockCodec;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** One node's client address and the channel to it, built on first use. */
public final class Endpoint {
  private final String address;
  private final ClientSettings settings;
  private final Executor executor;
  private ManagedChannel managed;
  private Channel channel;
  private CompletableFuture<Boolean> tlsProbe;
  private long tlsProbeNanos;

  Endpoint(String address, ClientSettings settings, Executor executor) {
    this.address = address;
    this.settings = settings;
    this.executor = executor;
  }

  public String address() {
    return address;
  }

  /** The channel, with the client's interceptors. */
  public synchronized Channel channel() {
    if (channel == null) {
      ManagedChannelBuilder<?> builder =
          Grpc.newChannelBuilder(address, settings.credentials())
              // lz4-block in every call's grpc-accept-encoding: a node then sends Watch streams
              // compressed (a quarter to a third of the bytes). A customizer may set its own
              // registry.
              .decompressorRegistry(Lz4BlockCodec.decompressors())
              // The clients' shared pool rather than gRPC's default, a cached pool that starts a
              // thread
              // for every callback arriving while the others are busy.
              .executor(executor);
      settings.channelCustomizer().accept(builder);
      managed = builder.build();
      channel = ClientInterceptors.intercept(managed, settings.interceptors());
    }
    return channel;
  }

  /**
   * Reconnects now if the channel is waiting out gRPC's reconnect backoff, which grows to seconds
   * while a node is down: a node that came back and now leads would otherwise refuse every call at
   * once until the backoff ends.
   */
  synchronized void reconnectNow() {
    if (managed != null) {
      managed.resetConnectBackoff();
    }
  }

  /**
   * Whether the node's port speaks TLS, as {@code probe} finds on a thread of its own; a probe
   * under way, or one done less than {@code reuseNanos} ago, is shared.
   */
  synchronized CompletableFuture<Boolean> tlsProbe(long reuseNanos, BooleanSupplier probe) {
    long now = System.nanoTime();
    if (tlsProbe != null && (!tlsProbe.isDone() || now - tlsProbeNanos < reuseNanos)) {
      return tlsProbe;
    }
    CompletableFuture<Boolean> f = new CompletableFuture<>();
    // Rare (a plaintext client's connection closed unanswered) and blocking: not on a shared pool.
    Thread t =
        new Thread(
            () -> {
              try {
                f.complete(probe.getAsBoolean());
              } catch (RuntimeException | Error e) {
                f.complete(false);
              }
            },
            "leasehold-tls-probe-" + address);
    t.setDaemon(true);
    tlsProbe = f;
    tlsProbeNanos = now;
    t.start();
    return f;
  }

  synchronized void shutdown() {
    if (managed != null) {
      managed.shutdownNow();
    }
  }

  void awaitTermination(long nanos) throws InterruptedException {
    ManagedChannel m;
    synchronized (this) {
      m = managed;
    }
    if (m != null) {
      m.awaitTermination(nanos, TimeUnit.NANOSECONDS);
    }
  }

  @Override
  public String toString() {
    return address;
  }
}
