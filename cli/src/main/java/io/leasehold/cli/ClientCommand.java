package io.leasehold.cli;

import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.LeaseholdClientBuilder;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * A command that talks to the cluster: connects with the global options, runs, and closes the
 * client. Subclasses say what to do in {@link #run}; failures propagate to {@link Errors}.
 */
public abstract class ClientCommand implements Callable<Integer> {
  private static final Pattern HOST_PORT = Pattern.compile("[^\\s/]+:\\d{1,5}");
  private static final Duration MAX_ATTEMPT = Duration.ofSeconds(5);

  /**
   * A CLI call's channels run on an event loop of its own (plain NIO: no native transport to unpack
   * and load), stopped before the JVM exits. gRPC's shared loop outlives a closed client by a
   * second, and the JVM's exit waits up to 300 ms for a thread blocked in native code, as its
   * selector is: that wait was most of a short call's time.
   */
  private static final ThreadFactory LOOP_THREADS =
      r -> {
        Thread t = new Thread(r, "leasehold-cli-io");
        t.setDaemon(true);
        return t;
      };

  @CommandLine.Spec protected CommandLine.Model.CommandSpec spec;

  protected LeaseholdCommand globals() {
    return (LeaseholdCommand) spec.root().userObject();
  }

  protected Output output() {
    return new Output(globals().output(), spec.commandLine().getOut());
  }

  protected PrintWriter err() {
    return spec.commandLine().getErr();
  }

  /** A usage error naming the problem (exit code 2). */
  protected CommandLine.ParameterException usage(String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }

  /** {@code host:port}, as {@code --endpoints} takes it. */
  public static boolean isHostPort(String endpoint) {
    return HOST_PORT.matcher(endpoint.trim()).matches();
  }

  @Override
  public final Integer call() throws Exception {
    LeaseholdClientBuilder b = LeaseholdClient.builder();
    for (String e : globals().endpoints()) {
      if (!isHostPort(e)) {
        throw usage("--endpoints: '" + e + "' is not host:port");
      }
      b.endpoints(e.trim());
    }
    if (globals().endpoints().isEmpty()) {
      throw usage("--endpoints: at least one host:port is required");
    }
    Duration timeout = globals().timeout();
    if (timeout.isZero()) {
      throw usage("--timeout: must be positive");
    }
    b.requestTimeout(timeout)
        .attemptTimeout(timeout.compareTo(MAX_ATTEMPT) < 0 ? timeout : MAX_ATTEMPT);
    globals().tls().configure(b);
    if (globals().token().isPresent()) {
      try {
        b.bearerToken(globals().token().get());
      } catch (IllegalArgumentException e) {
        throw usage("--bearer-token: " + e.getMessage());
      }
    }
    EventLoopGroup loop = new NioEventLoopGroup(1, LOOP_THREADS);
    b.channelCustomizer(
        channel -> {
          if (channel instanceof NettyChannelBuilder netty) {
            netty.eventLoopGroup(loop).channelType(NioSocketChannel.class);
          }
        });
    try (LeaseholdClient client = configure(b).build()) {
      return run(client, output());
    } finally {
      loop.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).await(1, TimeUnit.SECONDS);
    }
  }

  /** Client options a command needs beyond the global ones (holder, release on close). */
  protected LeaseholdClientBuilder configure(LeaseholdClientBuilder builder) {
    return builder;
  }

  /** Does the work; returns the exit code. */
  protected abstract int run(LeaseholdClient client, Output out) throws Exception;
}
