package io.leasehold.benchmarks.watch;

import com.google.protobuf.Duration;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Recorder;

/** Keeps a fixed number of Acquires of distinct names in flight until stopped. */
final class ClosedLoop {
  private final LeasesGrpc.LeasesStub stub;
  private final String tag;
  private final Duration ttl;
  final AtomicLong seq = new AtomicLong();
  final AtomicInteger outstanding = new AtomicInteger();
  final LongAdder granted = new LongAdder();
  final LongAdder notGranted = new LongAdder();
  final LongAdder errors = new LongAdder();
  final Map<String, AtomicInteger> errorsByStatus = new ConcurrentHashMap<>();
  final Recorder latency = new Recorder(TimeUnit.MINUTES.toNanos(5), 3);
  volatile boolean stop;

  ClosedLoop(LeasesGrpc.LeasesStub stub, String tag, Options options) {
    this.stub = stub;
    this.tag = tag;
    this.ttl = Duration.newBuilder().setSeconds(options.ttl.toSeconds()).build();
  }

  /**
   * Runs a loop for a while and waits for its last replies: an unrecorded warmup of the JVM and the
   * cluster.
   */
  static long warmup(
      LeasesGrpc.LeasesStub stub, String tag, Options options, java.time.Duration time)
      throws InterruptedException {
    ClosedLoop loop = new ClosedLoop(stub, tag, options);
    loop.start(options.inFlight);
    Thread.sleep(time.toMillis());
    loop.stop = true;
    BenchCluster.awaitQuietly(java.time.Duration.ofSeconds(60), () -> loop.outstanding.get() == 0);
    return loop.granted.sum();
  }

  void start(int inFlight) {
    outstanding.addAndGet(inFlight);
    for (int i = 0; i < inFlight; i++) {
      next();
    }
  }

  /** Sends one Acquire; its completion sends the next, until stopped or too many failures. */
  private void next() {
    if (stop || errors.sum() > 10_000) {
      outstanding.decrementAndGet();
      return;
    }
    AcquireRequest request =
        AcquireRequest.newBuilder()
            .setName(LatencyBenchmark.PREFIX + tag + "-" + seq.getAndIncrement())
            .setHolder("bench-client")
            .setTtl(ttl)
            .build();
    long sent = System.nanoTime();
    stub.withDeadlineAfter(60, TimeUnit.SECONDS)
        .acquire(
            request,
            new StreamObserver<>() {
              @Override
              public void onNext(AcquireResponse r) {
                latency.recordValue(Math.max(0, System.nanoTime() - sent));
                if (r.getOutcome() == Outcome.GRANTED) {
                  granted.increment();
                } else {
                  notGranted.increment();
                }
              }

              @Override
              public void onError(Throwable t) {
                errors.increment();
                errorsByStatus
                    .computeIfAbsent(
                        Status.fromThrowable(t).getCode().toString(), k -> new AtomicInteger())
                    .incrementAndGet();
                next();
              }

              @Override
              public void onCompleted() {
                next();
              }
            });
  }
}
