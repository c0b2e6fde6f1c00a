// How to run (from the repository root):
//
//   mvn -B -q -pl benchmarks -am package -DskipTests && \
//     java -cp benchmarks/target/benchmarks.jar io.leasehold.benchmarks.watch.LoneWrites
// [--writes=N] [--busy-threads=N]
//
// --busy-threads spins that many threads in this JVM beside the nodes, as a busy machine would.
package io.leasehold.benchmarks.watch;

import io.grpc.ManagedChannel;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.server.LeaseholdNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * How long after the leader's reply every follower has applied a lone write, on an idle three-node
 * cluster in this JVM: one Acquire at a time, each sent once the last is applied everywhere. A
 * follower hears of a commit with the leader's next append or heartbeat, so on an idle cluster a
 * lone write waits for the next heartbeat, here about 900 ms (election timeout 1,800–1,900 ms).
 * Prints the lags' distribution and how many took over 300 ms.
 */
public final class LoneWrites {
  private static final long SLOW_MS = 300;

  private LoneWrites() {}

  /** The lags of a run: every follower's apply after the leader's reply, in microseconds. */
  record Result(int busyThreads, Histogram lagsMicros, int slow) {
    String line() {
      return String.format(
          Locale.ROOT,
          "%d lone writes, %d busy threads: every follower applied the write p50 %.2f ms, p90 %.2f, "
              + "p99 %.2f, max %.2f ms after the leader's reply; %d over %d ms",
          lagsMicros.getTotalCount(),
          busyThreads,
          lagsMicros.getValueAtPercentile(50) / 1e3,
          lagsMicros.getValueAtPercentile(90) / 1e3,
          lagsMicros.getValueAtPercentile(99) / 1e3,
          lagsMicros.getMaxValue() / 1e3,
          slow,
          SLOW_MS);
    }
  }

  public static void main(String[] args) throws Exception {
    System.out.println(run(args).line());
  }

  static Result run(String[] args) throws Exception {
    int writes = 300;
    int busyThreads = 0;
    for (String a : args) {
      if (a.startsWith("--writes=")) {
        writes = positive("--writes", a.substring("--writes=".length()));
      } else if (a.startsWith("--busy-threads=")) {
        busyThreads = number("--busy-threads", a.substring("--busy-threads=".length()));
        if (busyThreads < 0) {
          throw new IllegalArgumentException(
              "--busy-threads must be 0 or more, got " + busyThreads);
        }
      } else {
        throw new IllegalArgumentException(
            "unknown argument '" + a + "'; usage: LoneWrites [--writes=N] [--busy-threads=N]");
      }
    }
    List<Thread> busy = new ArrayList<>();
    for (int i = 0; i < busyThreads; i++) {
      Thread t =
          new Thread(
              () -> {
                while (!Thread.currentThread().isInterrupted()) {
                  Thread.onSpinWait();
                }
              },
              "busy-" + i);
      t.setDaemon(true);
      busy.add(t);
    }
    Histogram lags = new Histogram(TimeUnit.SECONDS.toMicros(10), 3);
    int slow = 0;
    try (BenchCluster cluster =
        BenchCluster.start(
            3, Duration.ofMillis(1800), Duration.ofMillis(1900), NodeTuning.DEFAULTS)) {
      LeaseholdNode leader = cluster.awaitReadyLeader(Duration.ofSeconds(60));
      List<LeaseholdNode> followers = cluster.nodes().stream().filter(n -> n != leader).toList();
      ManagedChannel channel = cluster.channel(leader);
      LeasesGrpc.LeasesBlockingStub leases = LeasesGrpc.newBlockingStub(channel);
      busy.forEach(Thread::start);
      for (int i = 0; i < writes; i++) {
        AcquireResponse r =
            leases
                .withDeadlineAfter(30, TimeUnit.SECONDS)
                .acquire(
                    AcquireRequest.newBuilder()
                        .setName("lone/" + i)
                        .setHolder("lone-writer")
                        .setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(600))
                        .build());
        long replied = System.nanoTime();
        if (r.getOutcome() != Outcome.GRANTED) {
          throw new IllegalStateException("write " + i + ": " + r.getOutcome());
        }
        long revision = r.getRevision();
        awaitApplied(followers, revision);
        long lagMicros = (System.nanoTime() - replied) / 1_000;
        lags.recordValue(Math.min(lagMicros, lags.getHighestTrackableValue()));
        if (lagMicros > SLOW_MS * 1_000) {
          slow++;
        }
      }
    } finally {
      busy.forEach(Thread::interrupt);
    }
    return new Result(busyThreads, lags, slow);
  }

  /**
   * Polls every 0.2 ms until every follower has applied {@code revision}: a 5 ms poll would blur
   * the small lags.
   */
  private static void awaitApplied(List<LeaseholdNode> followers, long revision) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!followers.stream()
        .allMatch(f -> f.ratis().division().getInfo().getLastAppliedIndex() >= revision)) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "a follower did not apply revision " + revision + " within 10 s");
      }
      LockSupport.parkNanos(200_000);
    }
  }

  private static int number(String name, String value) {
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a number, got '" + value + "'");
    }
  }

  private static int positive(String name, String value) {
    int n = number(name, value);
    if (n <= 0) {
      throw new IllegalArgumentException(name + " must be positive, got " + n);
    }
    return n;
  }
}
