package io.leasehold.server.watch;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.statemachine.core.LeaseCore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One Watch stream. It reads the hub's shared {@link EventLog} from its own cursor; everything
 * the stream sends (history, live events, progress, the final status) is sent by one serialized
 * runner on the hub's sender pool, and only while gRPC says the stream is ready. A watcher whose
 * cursor falls more than its limit behind the log is cut off with the revision to resume from:
 * a slow watcher costs writes nothing, and holds at most that many events in memory.
 */
final class Watcher {
  static final Metadata.Key<String> COMPACT_REVISION = Metadata.Key.of("leasehold-compact-revision", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> RESUME_REVISION = Metadata.Key.of("leasehold-resume-revision", Metadata.ASCII_STRING_MARSHALLER);
  static final int MAX_EVENTS_PER_MESSAGE = 1000;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Watcher.class);

  private final WatchHub hub;
  private final EventLog log;
  private final WatchFilter filter;
  /** Whether the stream sends the basic view of events (see {@link WireEvent#basic}). */
  private final boolean basic;
  private final ServerCallStreamObserver<WatchFrame> out;
  private final Executor senders;
  private final int lagLimit;
  private final AtomicBoolean scheduled = new AtomicBoolean();

  // Guarded by this.
  private Status closeWith;
  private Metadata closeTrailers;

  // Touched only by the serialized runner.
  private final long startRevision;
  private boolean started;
  private boolean closed;
  /** The cursor: the next event to read is {@code node.events[index]}, or what follows the node. */
  private EventLog.Node node;
  private int index;
  /** Events of the log read so far (read by the hub's ticker for the lag). */
  private volatile long readSeq;
  /** Every matching event up to this revision has been sent (read by other threads for the resume revision). */
  private volatile long sentRevision;
  private volatile long lastSendNanos = System.nanoTime();
  private volatile boolean progressDue;

  Watcher(WatchHub hub, EventLog log, WatchFilter filter, boolean basic, long startRevision, ServerCallStreamObserver<WatchFrame> out,
          Executor senders, int lagLimit) {
    this.hub = hub;
    this.log = log;
    this.filter = filter;
    this.basic = basic;
    this.startRevision = startRevision;
    this.out = out;
    this.senders = senders;
    this.lagLimit = lagLimit;
    // Everything appended before registration is covered by the history read (or is before "now").
    this.node = log.tail();
    this.index = node.events.size();
    this.readSeq = node.endSeq;
  }

  WatchFilter filter() {
    return filter;
  }

  /** The first revision the client has not fully seen. */
  private long resumeRevision() {
    long sent = sentRevision;
    if (sent > 0) {
      return sent + 1;
    }
    return startRevision > 0 ? startRevision : hub.appliedRevision() + 1;
  }

  void close(Status status) {
    synchronized (this) {
      if (closeWith == null) {
        closeWith = status;
        closeTrailers = trailer(RESUME_REVISION, resumeRevision());
      }
    }
    schedule();
  }

  /**
   * From the hub's ticker: cuts off a watcher too far behind, wakes one whose coalescing interval
   * has passed with events waiting, and marks an idle one for a progress message.
   */
  void tick(long nowNanos, long progressIntervalNanos) {
    if (!started) {
      return;
    }
    long lag = log.endSeq() - readSeq;
    if (lag > lagLimit) {
      close(Status.RESOURCE_EXHAUSTED.withDescription("watcher fell more than " + lagLimit
          + " events behind and was cancelled; resume with start_revision=" + resumeRevision()));
      return;
    }
    if (lag > 0 && eventWait(nowNanos) <= 0) {
      schedule();
    } else if (nowNanos - lastSendNanos >= progressIntervalNanos) {
      progressDue = true;
      schedule();
    }
  }

  void schedule() {
    if (scheduled.compareAndSet(false, true)) {
      try {
        senders.execute(this::run);
      } catch (java.util.concurrent.RejectedExecutionException stopping) {
        scheduled.set(false);
      }
    }
  }

  /**
   * Nanoseconds until this stream may send events again (0 or less: now); see {@link
   * WatchHub#coalesceNanos()}. A full message's worth waiting is sent at once: waiting would make
   * it no cheaper, and a burst (a ban ending thousands of leases) must drain at full speed.
   */
  private long eventWait(long nowNanos) {
    long interval = hub.coalesceNanos();
    if (interval == 0 || log.endSeq() - readSeq >= MAX_EVENTS_PER_MESSAGE) {
      return 0;
    }
    return lastSendNanos + interval - nowNanos;
  }

  private void run() {
    try {
      drain();
    } catch (RuntimeException e) {
      boolean wasClosed = closed;
      closed = true;
      hub.remove(this);
      if (!wasClosed) {
        LOG.warn("watch stream failed", e);
        try {
          out.onError(Status.INTERNAL.withDescription("watch failed on this node: " + e).asRuntimeException());
        } catch (RuntimeException alreadyGone) {
          // The client went away first.
        }
      }
    } finally {
      scheduled.set(false);
    }
    if (!closed && pending()) {
      schedule();
    }
  }

  private boolean pending() {
    synchronized (this) {
      if (closeWith != null) {
        return true;
      }
    }
    if (!started || !out.isReady()) {
      return false;  // the onReady handler schedules us
    }
    return (unread() && eventWait(System.nanoTime()) <= 0) || progressDue;
  }

  /** Runner only: whether the log holds events past the cursor. */
  private boolean unread() {
    return index < node.events.size() || node.next != null;
  }

  private void drain() {
    if (closed) {
      return;
    }
    if (!started) {
      start();
      if (closed) {
        return;
      }
    }
    while (true) {
      Status status;
      Metadata trailers;
      synchronized (this) {
        status = closeWith;
        trailers = closeTrailers;
      }
      if (status != null) {
        closed = true;
        hub.remove(this);
        out.onError(status.asRuntimeException(trailers));
        return;
      }
      if (!out.isReady()) {
        return;  // the onReady handler schedules us again
      }
      // Read the hub's revision before the log: every entry up to it was appended before it was published.
      long applied = hub.appliedRevision();
      if (unread()) {
        if (eventWait(System.nanoTime()) > 0) {
          return;  // the hub's ticker wakes us when the interval has passed
        }
        // Sized for everything unread (at most a message's worth), so it never grows while read.
        List<WireEvent> batch = new ArrayList<>((int) Math.max(1, Math.min(MAX_EVENTS_PER_MESSAGE, log.endSeq() - readSeq)));
        boolean splitsARevision = read(batch);
        if (!batch.isEmpty()) {
          send(batch, completeThrough(batch, splitsARevision));
          progressDue = false;
          continue;
        }
      }
      if (progressDue) {
        progressDue = false;
        send(List.of(), Math.max(sentRevision, applied));
      }
      return;
    }
  }

  /**
   * Reads matching events from the cursor into {@code batch}, up to one message's worth; returns
   * whether more matching events of the batch's last revision remain (an entry can carry more
   * events than fit in one message, e.g. a ban of thousands of leases).
   */
  private boolean read(List<WireEvent> batch) {
    // A node is one entry: all its events share its revision, so whether they are new to this
    // stream is decided once per node. With a thousand watchers this loop runs for every event
    // and every watcher, and each event's revision was one more object to load.
    boolean newer = node.revision > sentRevision;
    while (true) {
      if (index >= node.events.size()) {
        EventLog.Node next = node.next;
        if (next == null) {
          break;
        }
        node = next;
        index = 0;
        newer = next.revision > sentRevision;
      }
      if (batch.size() == MAX_EVENTS_PER_MESSAGE) {
        break;
      }
      WireEvent e = node.events.get(index++);
      if (newer && filter.matches(e)) {
        batch.add(e);
      }
    }
    readSeq = node.startSeq() + index;
    if (batch.size() < MAX_EVENTS_PER_MESSAGE) {
      return false;
    }
    long last = batch.get(batch.size() - 1).revision();
    for (int i = index; i < node.events.size(); i++) {
      WireEvent e = node.events.get(i);
      if (e.revision() == last && filter.matches(e)) {
        return true;
      }
    }
    return false;
  }

  /** History from the start revision (or nothing, from now on), then live events. */
  private void start() {
    started = true;
    if (startRevision == 0) {
      // From now on: everything in the store counts as seen; tell the client where it starts.
      // The store's index, not the hub's: an entry is in the store before its events are
      // appended, so one this watcher's cursor missed while registering is before its start.
      send(List.of(), hub.core().applied().index());
      return;
    }
    List<WireEvent> history = new ArrayList<>();
    LeaseCore.HistoryRead read = hub.core().readHistory(startRevision, e -> {
      if (filter.matches(e)) {
        history.add(WireEvent.of(e));
      }
    });
    if (read.compacted()) {
      close(Status.OUT_OF_RANGE.withDescription("start_revision " + startRevision + " is compacted: the history starts at revision "
          + read.compactRevision() + "; list (which returns a revision R) and watch from R + 1"), trailer(COMPACT_REVISION, read.compactRevision()));
      return;
    }
    for (int i = 0; i < history.size(); i += MAX_EVENTS_PER_MESSAGE) {
      int end = Math.min(history.size(), i + MAX_EVENTS_PER_MESSAGE);
      List<WireEvent> chunk = history.subList(i, end);
      boolean splitsARevision = end < history.size() && history.get(end).revision() == chunk.get(chunk.size() - 1).revision();
      send(chunk, completeThrough(chunk, splitsARevision));
    }
    // Everything up to the view's revision has been delivered, matching or not.
    send(List.of(), Math.max(sentRevision, read.revision()));
  }

  private void close(Status status, Metadata trailers) {
    closed = true;
    hub.remove(this);
    out.onError(status.asRuntimeException(trailers));
  }

  /**
   * The revision a message may claim as fully sent: its last event's, unless more events of that
   * revision follow in the next message. Then only the revision before: a client that resumes
   * from the claimed revision + 1 must still get the rest.
   */
  private static long completeThrough(List<WireEvent> events, boolean splitsARevision) {
    long last = events.get(events.size() - 1).revision();
    return splitsARevision ? last - 1 : last;
  }

  private void send(List<WireEvent> events, long revision) {
    out.onNext(new WatchFrame(events, revision, basic));
    sentRevision = Math.max(sentRevision, revision);
    lastSendNanos = System.nanoTime();
  }

  /** The client went away. */
  void cancelled() {
    synchronized (this) {
      closeWith = Status.CANCELLED;
    }
    closed = true;
    hub.remove(this);
  }

  private static Metadata trailer(Metadata.Key<String> key, long value) {
    Metadata m = new Metadata();
    m.put(key, Long.toString(value));
    return m;
  }
}
