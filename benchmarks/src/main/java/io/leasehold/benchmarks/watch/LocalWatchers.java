package io.leasehold.benchmarks.watch;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.leasehold.proto.v1.WatchRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/** Counting watchers in this JVM, spread over a few client channels (see {@link CountingWatch}). */
final class LocalWatchers implements WatcherFleet {
  private final Supplier<ManagedChannel> newChannel;
  private final int channelCount;

  /**
   * Whether {@link #cancel} shuts this phase's channels down (the benchmark's cluster closes its
   * own at the end).
   */
  private final boolean ownsChannels;

  private final List<CountingWatcher> watchers = new ArrayList<>();
  private final List<ManagedChannel> channels = new ArrayList<>();

  LocalWatchers(Supplier<ManagedChannel> newChannel, int channelCount, boolean ownsChannels) {
    this.newChannel = newChannel;
    this.channelCount = channelCount;
    this.ownsChannels = ownsChannels;
  }

  @Override
  public double open(int count, WatchRequest request) {
    if (!watchers.isEmpty()) {
      throw new IllegalStateException("watchers already open");
    }
    for (int i = 0; i < Math.min(channelCount, count); i++) {
      channels.add(newChannel.get());
    }
    long start = System.nanoTime();
    for (int i = 0; i < count; i++) {
      CountingWatcher w = new CountingWatcher();
      watchers.add(w);
      CountingWatch.watch(channels.get(i % channels.size()), request, w, w.wireBytes);
    }
    BenchCluster.await(
        count + " watches to start (first response each)",
        Duration.ofSeconds(120),
        () -> watchers.stream().allMatch(w -> w.started || w.error != null));
    CountingWatcher failed =
        watchers.stream().filter(w -> w.error != null).findFirst().orElse(null);
    if (failed != null) {
      throw new IllegalStateException(
          "a watch failed to start: " + failed.error + ": " + failed.description);
    }
    return (System.nanoTime() - start) / 1e6;
  }

  @Override
  public Seen seen() {
    long fewest = Long.MAX_VALUE;
    long total = 0;
    for (CountingWatcher w : watchers) {
      long a = w.acquired;
      fewest = Math.min(fewest, a);
      total += a;
    }
    return new Seen(watchers.isEmpty() ? 0 : fewest, total);
  }

  @Override
  public boolean awaitAll(long granted, Duration timeout) {
    return BenchCluster.awaitQuietly(
        timeout, () -> watchers.stream().allMatch(w -> w.acquired >= granted || w.error != null));
  }

  @Override
  public Tally tally(long granted) {
    Map<String, Integer> failures = new TreeMap<>();
    String example = null;
    int complete = 0;
    int over = 0;
    int failed = 0;
    long fewest = Long.MAX_VALUE;
    long outOfOrder = 0;
    long other = 0;
    long messages = 0;
    long bytes = 0;
    long events = 0;
    long wireBytes = 0;
    for (CountingWatcher w : watchers) {
      wireBytes += w.wireBytes.sum();
      long seen = w.acquired;
      fewest = Math.min(fewest, seen);
      other += w.other;
      messages += w.messagesWithEvents;
      bytes += w.bytesWithEvents;
      events += w.acquired + w.other;
      if (!w.inOrder) {
        outOfOrder++;
      }
      if (w.error != null) {
        failed++;
        failures.merge(w.error, 1, Integer::sum);
        if (example == null && w.description != null) {
          example = w.error + ": " + w.description;
        }
      } else if (seen == granted) {
        complete++;
      } else if (seen > granted) {
        over++;
      }
    }
    return new Tally(
        watchers.size(),
        complete,
        over,
        failed,
        failures,
        example,
        watchers.isEmpty() ? 0 : fewest,
        outOfOrder,
        other,
        messages,
        bytes,
        events,
        wireBytes);
  }

  @Override
  public void cancel() {
    watchers.forEach(w -> w.cancel("benchmark phase done"));
    watchers.clear();
    if (ownsChannels) {
      channels.forEach(ManagedChannel::shutdownNow);
    }
    channels.clear();
  }

  @Override
  public double cpuSeconds() {
    return Double.NaN;
  }

  @Override
  public String where() {
    return "in this JVM";
  }

  @Override
  public void close() {
    cancel();
  }

  /**
   * Counts the events of one Watch stream without building messages (see {@link CountingWatch}).
   */
  private static final class CountingWatcher extends EndableWatch<CountingWatch.Counted> {
    volatile boolean started;
    volatile String description;
    // Single writer (gRPC serializes a call's callbacks); volatile so the main thread reads fresh
    // values.
    volatile long acquired;
    volatile long other;
    volatile long messagesWithEvents;
    volatile long bytesWithEvents;
    volatile boolean inOrder = true;

    /**
     * Bytes of message bodies as received, counted by gRPC's stream tracer on its transport thread.
     */
    final LongAdder wireBytes = new LongAdder();

    private long lastRevision;

    @Override
    public void onNext(CountingWatch.Counted c) {
      started = true;
      if (c.events() > 0) {
        if (!c.inOrder() || c.firstRevision() < lastRevision) {
          inOrder = false;
        }
        lastRevision = c.lastRevision();
        messagesWithEvents++;
        bytesWithEvents += c.bytes();
        if (c.acquired() > 0) {
          acquired += c.acquired();
        }
        if (c.other() > 0) {
          other += c.other();
        }
      }
    }

    @Override
    void failed(Status s) {
      description = s.getDescription();
      error = s.getCode().toString();
    }
  }
}
