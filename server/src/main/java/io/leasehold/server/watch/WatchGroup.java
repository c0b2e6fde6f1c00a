package io.leasehold.server.watch;

/**
 * The watchers of one node that ask for the same events in the same view (equal filters, same
 * view), and the last message one of them built. Watchers that have read the log to the same place
 * would each build the same next message, so the first to build it leaves it here and the others
 * send it as it is: with a thousand watchers of one prefix, a message is built and gathered once
 * per coalescing interval instead of a thousand times.
 *
 * <p>This only works if the group's watchers stop reading at the same place. A watcher that is
 * behind the group's last read (it joined late, read history, or was held up) reads only up to
 * where that read ended, so from its next message on it shares again. See {@link Watcher}.
 */
final class WatchGroup {
  /** What identifies a group: watchers with equal keys build equal messages from equal places. */
  record Key(WatchFilter filter, boolean basic) {}

  /**
   * One message's read of the log: from {@code startSeq} (a position in the log's event count) to
   * the cursor ({@code endNode}, {@code endIndex}), whose position is {@code endSeq}. {@code frame}
   * is the message, or null if no event there matched. It holds for a watcher at {@code startSeq}
   * whose stream has not yet claimed {@code firstRevision} complete, the revision of the first
   * entry read: all the events read are new to that watcher, as they were to the one that built it.
   * {@code builtNanos} is when it was read.
   */
  record Read(
      long startSeq,
      long firstRevision,
      EventLog.Node endNode,
      int endIndex,
      long endSeq,
      WatchFrame frame,
      long builtNanos) {}

  /** The filter and view every member shares. */
  final Key key;

  /** Watchers in the group, counted under the hub's map lock. */
  int members;

  /** The most recent read a member built (immutable, so members on other senders may take it). */
  volatile Read last;

  WatchGroup(Key key) {
    this.key = key;
  }
}
