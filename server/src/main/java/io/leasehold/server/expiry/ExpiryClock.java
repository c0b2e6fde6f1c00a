package io.leasehold.server.expiry;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The monotonic clock the expiry ticker decides by: {@link System#nanoTime()}, plus whatever a test
 * moved it forward by. Moving it forward makes every lease, session, lock-delay and timed ban that
 * much nearer its end, so that a test sees a TTL run out without waiting for it; the ticker takes a
 * deliberate move for what it is, not for a stall (which would extend every lease instead).
 *
 * <p>Only in-process nodes started with a clock of their own can be moved ({@link
 * io.leasehold.server.LeaseholdNode#start(io.leasehold.server.NodeConfig, ExpiryClock,
 * java.util.function.Consumer)}); a node started from the command line never is. Wall-clock stamps
 * (a lease's acquired and expires times) are not moved.
 */
public final class ExpiryClock {
  private final AtomicLong skipped = new AtomicLong();

  /** A clock that runs with {@link System#nanoTime()} until {@link #advance} moves it. */
  public ExpiryClock() {}

  /** Now, in nanoseconds (only differences mean anything). */
  public long nanos() {
    return System.nanoTime() + skipped.get();
  }

  /** How far {@link #advance} has moved this clock in all. */
  public long skippedNanos() {
    return skipped.get();
  }

  /**
   * Moves the clock forward.
   *
   * @param by how far: positive
   * @throws IllegalArgumentException if {@code by} is zero or negative (a clock never goes back)
   */
  public void advance(Duration by) {
    if (by.isNegative() || by.isZero()) {
      throw new IllegalArgumentException(
          "by: must be positive (a clock never goes back), got " + by);
    }
    skipped.addAndGet(by.toNanos());
  }
}
