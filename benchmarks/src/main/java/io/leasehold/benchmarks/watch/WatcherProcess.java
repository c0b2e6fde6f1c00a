package io.leasehold.benchmarks.watch;

import io.grpc.DecompressorRegistry;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.leasehold.proto.Lz4BlockCodec;
import io.leasehold.proto.v1.WatchRequest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The fan-out's watchers in a child JVM ({@code --watchers-in=process}, {@code idle-process} or
 * {@code capped-process}, for which {@link CpuSplit} moves it into a control group of its own).
 *
 * <p>In a deployment the proxies that watch run on machines of their own; in one JVM on two cores
 * their client work (reading some 130 MB/s of events) shares the cluster's cores and CPU figures. A
 * child process at the scheduler's idle priority ({@code chrt --idle 0}) was meant to run only on
 * cycles nothing in the measured JVM wants, but the cores it took still came out of the cluster's
 * (in two sets of runs); a CPU quota on each side ({@code capped-process}) keeps them apart
 * (docs/performance.md, "Targets"). Wherever it runs, the child must still read every event: one
 * that falls behind is cut off by the server and counted as failed.
 *
 * <p>The parent drives the child over its standard input and output, one line per command and one
 * per answer ({@link #main} lists them); the child exits when its input closes, so it never
 * outlives the benchmark.
 */
final class WatcherProcess implements WatcherFleet {
  private final ChildJvm child;
  private final String where;

  private WatcherProcess(ChildJvm child, String where) {
    this.child = child;
    this.where = where;
  }

  /**
   * Starts a child JVM that will open its watches on {@code target} ({@code host:port}) over {@code
   * channels} connections; {@code idle}: at the scheduler's idle priority; {@code acceptLz4}:
   * whether its channels accept lz4-block-compressed Watch streams; {@code where}: how reports name
   * where the watchers run, or null for the default.
   */
  static WatcherProcess start(
      String target, int channels, boolean idle, boolean acceptLz4, String where)
      throws IOException {
    List<String> command = new ArrayList<>();
    if (idle) {
      if (!Files.isExecutable(Path.of("/usr/bin/chrt"))) {
        throw new IllegalStateException(
            "--watchers-in=idle-process needs chrt (util-linux) at /usr/bin/chrt");
      }
      command.addAll(List.of("/usr/bin/chrt", "--idle", "0"));
    }
    command.addAll(
        List.of(
            ChildJvm.java(),
            "-XX:+UseG1GC",
            "-Xmx2g",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp",
            System.getProperty("java.class.path"),
            WatcherProcess.class.getName(),
            target,
            Integer.toString(channels),
            acceptLz4 ? "lz4" : "none"));
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    WatcherProcess fleet =
        new WatcherProcess(
            new ChildJvm("the watcher process", p, null),
            where != null
                ? where
                : idle ? "in a child process at idle priority" : "in a child process");
    fleet.child.expect("ready");
    return fleet;
  }

  @Override
  public double open(int count, WatchRequest request) {
    String[] a =
        ask(
            "open " + count + " " + Base64.getEncoder().encodeToString(request.toByteArray()),
            "opened");
    return Double.parseDouble(a[1]);
  }

  @Override
  public Seen seen() {
    String[] a = ask("seen", "seen");
    return new Seen(Long.parseLong(a[1]), Long.parseLong(a[2]));
  }

  @Override
  public boolean awaitAll(long granted, Duration timeout) {
    return Boolean.parseBoolean(ask("await " + granted + " " + timeout.toMillis(), "awaited")[1]);
  }

  @Override
  public Tally tally(long granted) {
    return decodeTally(ask("tally " + granted, "tally"));
  }

  @Override
  public void cancel() {
    ask("cancel", "cancelled");
  }

  @Override
  public double cpuSeconds() {
    return child.cpuSeconds();
  }

  @Override
  public String where() {
    return where;
  }

  long pid() {
    return child.pid();
  }

  @Override
  public void close() {
    child.close(Duration.ofSeconds(10));
  }

  private String[] ask(String command, String answer) {
    return child.ask(command, answer);
  }

  static String encodeTally(Tally t) {
    StringBuilder failures = new StringBuilder();
    t.failures()
        .forEach(
            (k, v) ->
                failures.append(failures.length() == 0 ? "" : ",").append(k).append('=').append(v));
    return String.join(
        " ",
        "tally",
        Integer.toString(t.watchers()),
        Integer.toString(t.complete()),
        Integer.toString(t.over()),
        Integer.toString(t.failed()),
        failures.length() == 0 ? "-" : failures.toString(),
        t.example() == null
            ? "-"
            : Base64.getEncoder().encodeToString(t.example().getBytes(StandardCharsets.UTF_8)),
        Long.toString(t.fewestSeen()),
        Long.toString(t.outOfOrder()),
        Long.toString(t.other()),
        Long.toString(t.messages()),
        Long.toString(t.bytes()),
        Long.toString(t.events()),
        Long.toString(t.wireBytes()));
  }

  static Tally decodeTally(String[] a) {
    Map<String, Integer> failures = new TreeMap<>();
    if (!a[5].equals("-")) {
      for (String kv : a[5].split(",")) {
        int eq = kv.indexOf('=');
        failures.put(kv.substring(0, eq), Integer.parseInt(kv.substring(eq + 1)));
      }
    }
    String example =
        a[6].equals("-")
            ? null
            : new String(Base64.getDecoder().decode(a[6]), StandardCharsets.UTF_8);
    return new Tally(
        Integer.parseInt(a[1]),
        Integer.parseInt(a[2]),
        Integer.parseInt(a[3]),
        Integer.parseInt(a[4]),
        failures,
        example,
        Long.parseLong(a[7]),
        Long.parseLong(a[8]),
        Long.parseLong(a[9]),
        Long.parseLong(a[10]),
        Long.parseLong(a[11]),
        Long.parseLong(a[12]),
        Long.parseLong(a[13]));
  }

  /**
   * The child: {@code WatcherProcess host:port channels}. Answers, one line each: {@code open N
   * BASE64(WatchRequest)} → {@code opened MS}; {@code seen} → {@code seen FEWEST TOTAL}; {@code
   * await GRANTED TIMEOUT_MS} → {@code awaited true|false}; {@code tally GRANTED} → {@code tally
   * …}; {@code cancel} → {@code cancelled}; a failed command → {@code error MESSAGE}.
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 3 || !(args[2].equals("lz4") || args[2].equals("none"))) {
      System.err.println("usage: WatcherProcess host:port channels lz4|none");
      System.exit(64);
    }
    String target = args[0];
    int channels = Integer.parseInt(args[1]);
    DecompressorRegistry decompressors =
        args[2].equals("lz4")
            ? Lz4BlockCodec.decompressors()
            : DecompressorRegistry.getDefaultInstance();
    boolean epoll = Epoll.isAvailable();
    DefaultThreadFactory threads = new DefaultThreadFactory("watcher-elg", true);
    // Two loops, as the watchers have in the benchmark's JVM.
    EventLoopGroup group =
        epoll ? new EpollEventLoopGroup(2, threads) : new NioEventLoopGroup(2, threads);
    LocalWatchers watchers =
        new LocalWatchers(
            () ->
                NettyChannelBuilder.forTarget(target)
                    .usePlaintext()
                    .decompressorRegistry(decompressors)
                    .eventLoopGroup(group)
                    .channelType(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                    .directExecutor()
                    .build(),
            channels,
            true);
    PrintWriter out =
        new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    out.println("ready");
    String line;
    while ((line = in.readLine()) != null) {
      String[] a = line.split(" ");
      try {
        out.println(
            switch (a[0]) {
              case "open" ->
                  "opened "
                      + watchers.open(
                          Integer.parseInt(a[1]),
                          WatchRequest.parseFrom(Base64.getDecoder().decode(a[2])));
              case "seen" -> {
                Seen s = watchers.seen();
                yield "seen " + s.fewest() + " " + s.total();
              }
              case "await" ->
                  "awaited "
                      + watchers.awaitAll(
                          Long.parseLong(a[1]), Duration.ofMillis(Long.parseLong(a[2])));
              case "tally" -> encodeTally(watchers.tally(Long.parseLong(a[1])));
              case "cancel" -> {
                watchers.cancel();
                yield "cancelled";
              }
              default -> "error unknown command '" + a[0] + "'";
            });
      } catch (RuntimeException e) {
        out.println("error " + String.valueOf(e).replace('\n', ' '));
      }
    }
    watchers.close();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    System.exit(0);
  }
}
