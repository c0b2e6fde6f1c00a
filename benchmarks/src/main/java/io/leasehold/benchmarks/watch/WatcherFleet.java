package io.leasehold.benchmarks.watch;

import io.leasehold.proto.v1.WatchRequest;
import java.time.Duration;
import java.util.Map;

/**
 * The watchers of one fan-out phase: in the benchmark's own JVM ({@link LocalWatchers}), or in a
 * child process ({@link WatcherProcess}), where their CPU is not counted as the measured JVM's and,
 * at idle priority, is only what the measured JVM leaves.
 */
interface WatcherFleet extends AutoCloseable {
  /**
   * Opens {@code count} watches and returns once each has had its first response; the milliseconds
   * that took.
   */
  double open(int count, WatchRequest request) throws InterruptedException;

  /** How many acquisitions the watcher that has seen fewest has seen, and all watchers together. */
  Seen seen();

  /**
   * Waits until every watcher has seen {@code granted} acquisitions or failed; false when the
   * timeout came first.
   */
  boolean awaitAll(long granted, Duration timeout) throws InterruptedException;

  /** What the watchers saw, judged against the phase's {@code granted} acquisitions. */
  Tally tally(long granted);

  /** Ends the phase's watches. */
  void cancel();

  /**
   * CPU seconds the watchers' process has used so far, when they run in a process of their own; NaN
   * when they are in this JVM (its CPU table counts them with everything else).
   */
  double cpuSeconds();

  /** Where the watchers run, for the report. */
  String where();

  @Override
  void close();

  record Seen(long fewest, long total) {}

  /**
   * {@code complete}: watchers that saw exactly the phase's acquisitions; {@code over}: more;
   * {@code failed}: ended with an error ({@code failures} by status, {@code example} one
   * description). {@code bytes}: of the messages with events, as protobuf encodes them; {@code
   * wireBytes}: of every message as it came off the wire (compressed, where the stream was),
   * without gRPC's and HTTP/2's framing.
   */
  record Tally(
      int watchers,
      int complete,
      int over,
      int failed,
      Map<String, Integer> failures,
      String example,
      long fewestSeen,
      long outOfOrder,
      long other,
      long messages,
      long bytes,
      long events,
      long wireBytes) {}
}
