package io.leasehold.benchmarks.watch;

import io.leasehold.server.raft.CommitClock;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * When the leader found each log entry committed ({@link System#nanoTime}), for the indexes in
 * {@code (base, base + length)}, as its {@link CommitClock} reports them. The listener only sets
 * array slots, so it returns at once on the Ratis thread that calls it.
 *
 * <p>With one JVM per node the leader's process records them and hands them over in a file ({@link
 * #writeTo}, {@link #readFrom}). Its {@code System.nanoTime} and the benchmark's are the same
 * clock: HotSpot reads {@code CLOCK_MONOTONIC} on Linux, which is system-wide, so times taken in
 * different processes on one machine can be subtracted.
 */
final class CommitTimes implements CommitClock.Listener {
  private final long base;
  private final AtomicLongArray nanos;

  CommitTimes(long base, int length) {
    this.base = base;
    this.nanos = new AtomicLongArray(length);
  }

  long base() {
    return base;
  }

  int length() {
    return nanos.length();
  }

  @Override
  public void committed(long fromExclusive, long toInclusive, long nanoTime) {
    for (long index = Math.max(fromExclusive, base) + 1;
        index <= toInclusive && index - base < nanos.length();
        index++) {
      nanos.set((int) (index - base), nanoTime);
    }
  }

  /**
   * When log entry {@code index} was found committed; 0 if it was not reported or lies outside the
   * window.
   */
  long at(long index) {
    long slot = index - base;
    return slot > 0 && slot < nanos.length() ? nanos.get((int) slot) : 0;
  }

  /** How many indexes have a time. */
  int reported() {
    int n = 0;
    for (int i = 0; i < nanos.length(); i++) {
      n += nanos.get(i) != 0 ? 1 : 0;
    }
    return n;
  }

  void writeTo(Path file) throws IOException {
    try (DataOutputStream out =
        new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)))) {
      out.writeLong(base);
      out.writeInt(nanos.length());
      for (int i = 0; i < nanos.length(); i++) {
        out.writeLong(nanos.get(i));
      }
    }
  }

  static CommitTimes readFrom(Path file) throws IOException {
    try (DataInputStream in =
        new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
      CommitTimes times = new CommitTimes(in.readLong(), in.readInt());
      for (int i = 0; i < times.nanos.length(); i++) {
        times.nanos.set(i, in.readLong());
      }
      return times;
    }
  }
}
