package io.leasehold.server.watch;

import java.util.List;

/**
 * The live events of applied entries, in apply order, shared by every watcher of a node: the apply
 * thread appends one node per entry (when anyone watches), and each watcher reads on from its own
 * cursor. So the apply thread's work per entry does not grow with the number of watchers, and a
 * node is kept only while some watcher still has it ahead of its cursor: the hub's ticker unlinks
 * the nodes every cursor has passed ({@link #trimBefore}).
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

  /** The oldest node still linked to the next one. The trimming thread only. */
  private Node oldest = tail;

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

  /**
   * Unlinks each node that ends before {@code seq} from the node after it; {@code seq} must be at
   * or before every reader's cursor (the least of their read positions), so no reader follows those
   * links again. The collector still would: a node that lived long enough to be promoted (the log's
   * first node, one a watcher idled on) is, dead or not, a root of every young collection until an
   * old-generation collection frees it, so its link kept the next node alive until that one was
   * promoted too, and so on down the log: every event appended was copied through the young
   * generation and promoted, dead, with its lease, times and encoded forms.
   */
  void trimBefore(long seq) {
    Node n = oldest;
    Node next;
    while (n.endSeq < seq && (next = n.next) != null) {
      n.next = null;
      n = next;
    }
    oldest = n;
  }

  /** Events appended so far, in all. */
  long endSeq() {
    return tail.endSeq;
  }
}
