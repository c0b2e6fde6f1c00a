package io.leasehold.client;

/** How much of each event a watch streams ({@link WatchOptions#view()}). */
public enum WatchView {
  /** Every field of the event and its lease. */
  FULL,
  /**
   * About a third of the bytes: each event's type, revision, name, reason and message, and of its
   * lease only the holder, token and attributes; the lease's TTL, times and counters, and the
   * event's time, are then zero ({@link java.time.Instant#EPOCH}, {@link java.time.Duration#ZERO},
   * 0). For watchers that only follow who holds what where, as {@link RoutingTable} does.
   */
  BASIC
}
