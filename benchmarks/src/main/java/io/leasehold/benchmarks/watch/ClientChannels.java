package io.leasehold.benchmarks.watch;

import io.grpc.DecompressorRegistry;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.leasehold.proto.Lz4BlockCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark's client channels: plain gRPC over loopback TCP ({@code ManagedChannelBuilder}'s
 * Netty implementation, plaintext), on event loop groups of their own ({@code bench-client-*} and
 * {@code bench-writer-*} threads) rather than gRPC's process-wide default that in-process nodes'
 * servers also use: the client's CPU then shows up apart from the server's in the per-thread CPU
 * accounting.
 */
final class ClientChannels implements AutoCloseable {
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final EventLoopGroup clientGroup;

  /**
   * The load's own client event loop. In a deployment the runners that acquire and the proxies that
   * watch are different processes, usually on different machines; here they share one JVM, and on
   * {@link #clientGroup} the acquire replies would wait behind a thousand watchers' messages on the
   * same two threads. Its own thread still shares the machine's cores. (Measured both ways: no
   * difference beyond the noise.)
   */
  private final EventLoopGroup writerGroup;

  private final boolean epoll;

  ClientChannels() {
    this.epoll = Epoll.isAvailable();
    DefaultThreadFactory threads = new DefaultThreadFactory("bench-client-elg", true);
    this.clientGroup =
        epoll ? new EpollEventLoopGroup(2, threads) : new NioEventLoopGroup(2, threads);
    DefaultThreadFactory writerThreads = new DefaultThreadFactory("bench-writer-elg", true);
    this.writerGroup =
        epoll ? new EpollEventLoopGroup(1, writerThreads) : new NioEventLoopGroup(1, writerThreads);
  }

  /** A new channel to {@code address} ({@code host:port}) on the watchers' event loops. */
  ManagedChannel channel(String address) {
    return channel(address, clientGroup, true);
  }

  /**
   * As {@link #channel(String)}; {@code acceptLz4} false: a channel that accepts only gRPC's
   * default encodings, so the node sends its Watch streams uncompressed.
   */
  ManagedChannel channel(String address, boolean acceptLz4) {
    return channel(address, clientGroup, acceptLz4);
  }

  /**
   * A channel for the acquire load: on its own event loop unless {@code shareWatchersLoop}, which
   * puts it on the watchers' loops as the benchmark's first versions did.
   */
  ManagedChannel writerChannel(String address, boolean shareWatchersLoop) {
    return channel(address, shareWatchersLoop ? clientGroup : writerGroup, true);
  }

  private ManagedChannel channel(String address, EventLoopGroup group, boolean acceptLz4) {
    ManagedChannel ch =
        NettyChannelBuilder.forTarget(address)
            .usePlaintext()
            // As the SDK's channels: gRPC's encodings and lz4-block, in which nodes compress Watch
            // streams.
            .decompressorRegistry(
                acceptLz4
                    ? Lz4BlockCodec.decompressors()
                    : DecompressorRegistry.getDefaultInstance())
            .eventLoopGroup(group)
            .channelType(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
            // Callbacks are cheap and never block: run them on the event loop, no hand-off.
            .directExecutor()
            .build();
    synchronized (channels) {
      channels.add(ch);
    }
    return ch;
  }

  @Override
  public void close() {
    synchronized (channels) {
      channels.forEach(ManagedChannel::shutdownNow);
    }
    clientGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    writerGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
