package io.leasehold.server.watch;

import java.util.List;

/**
 * The live events of applied entries, in apply order, shared by every watcher of a node: the
 * apply thread appends one node per entry (when anyone watches), and each watcher reads on from
 * its own cursor. So the apply thread's work per entry does not grow with the number of
 * watchers, and a node is kept only while some watcher still has it ahead of its cursor.
 */
final class EventLog {
  /** One entry's events (all of one revision); {@code endSeq} counts every event up to its end. */
  static final class Node {
    final List<WireEvent> events;
    final long revision;
    final long endSeq;
    volatile Node next;

    Node(List<WireEvent> events, long revision, long endSeq) {
      this.events = events;
      this.revision = revision;
      this.endSeq = endSeq;
    }

    long startSeq() {
      return endSeq - events.size();
    }
  }

  private volatile Node tail = new Node(List.of(), 0, 0);

  /** The apply thread only. */
  void append(List<WireEvent> events, long revision) {
    Node last = tail;
    Node node = new Node(events, revision, last.endSeq + events.size());
    last.next = node;
    tail = node;
  }

  /** Where a new reader starts: after everything appended so far. */
  Node tail() {
    return tail;
  }

  /** Events appended so far, in all. */
  long endSeq() {
    return tail.endSeq;
  }
}
