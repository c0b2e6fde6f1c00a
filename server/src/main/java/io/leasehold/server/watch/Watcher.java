package io.leasehold.server.watch;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.statemachine.core.LeaseCore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Watch stream. It reads the hub's shared {@link EventLog} from its own cursor; everything the
 * stream sends (history, live events, progress, the final status) is sent by one serialized runner
 * on the hub's sender pool, and only while gRPC says the stream is ready. A watcher whose cursor
 * falls more than its limit behind the log is cut off with the revision to resume from: a slow
 * watcher costs writes nothing, and holds at most that many events in memory.
 *
 * <p>Watchers with the same filter and view form a {@link WatchGroup}. A watcher that stands where
 * the group's last message was read from sends that message as it is, instead of reading the log
 * and building the same message again; the others read up to where it ended, so they share from
 * then on. Such a watcher counts its coalescing interval from when the message was built, so the
 * group's watchers come due together.
 */
final class Watcher {
  static final int MAX_EVENTS_PER_MESSAGE = 1000;

  /** Messages smaller than this go uncompressed even on a stream that compresses. */
  static final int COMPRESS_FROM_BYTES = 512;

  private static final Logger LOG = LoggerFactory.getLogger(Watcher.class);

  private final WatchHub hub;
  private final EventLog log;
  private final WatchGroup group;
  private final WatchFilter filter;

  /** Whether the stream sends the basic view of events (see {@link WireEvent#basic}). */
  private final boolean basic;

  private final ServerCallStreamObserver<WatchFrame> out;
  private final Executor senders;
  private final int lagLimit;
  private final AtomicBoolean scheduled = new AtomicBoolean();

  /**
   * Set by gRPC's first onReady. gRPC reports the stream ready only once the service method has
   * returned, so until then its own thread may still be in {@link WatchHub#watch}, and a {@code
   * ServerCall} must not be used from two threads at once: the runner sends nothing before this,
   * however it was woken (an applied entry, the ticker, a close).
   */
  private volatile boolean readied;

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

  /**
   * Every matching event up to this revision has been sent (read by other threads for the resume
   * revision).
   */
  private volatile long sentRevision;

  private volatile long lastSendNanos = System.nanoTime();
  private volatile boolean progressDue;

  Watcher(
      WatchHub hub,
      EventLog log,
      WatchGroup group,
      long startRevision,
      ServerCallStreamObserver<WatchFrame> out,
      Executor senders,
      int lagLimit) {
    this.hub = hub;
    this.log = log;
    this.group = group;
    // Copied out of the group's key: the read loop checks the filter for every event.
    this.filter = group.key.filter();
    this.basic = group.key.basic();
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

  /** Where the cursor stands in the log's event count, or before it (it only moves on). */
  long readSeq() {
    return readSeq;
  }

  WatchGroup group() {
    return group;
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
        closeTrailers = WatchTrailers.resumeRevision(resumeRevision());
      }
    }
    schedule();
  }

  /**
   * From the hub's ticker: cuts off a watcher too far behind, wakes one whose coalescing interval
   * has passed with events waiting, and marks an idle one for a progress message.
   */
  void tick(long nowNanos, long progressIntervalNanos) {
    long lag = log.endSeq() - readSeq;
    if (lag > lagLimit) {
      close(
          Status.RESOURCE_EXHAUSTED.withDescription(
              "watcher fell more than "
                  + lagLimit
                  + " events behind and was cancelled; resume with start_revision="
                  + resumeRevision()));
      if (!readied) {
        // Its stream has never been ready, so the runner cannot end it yet (it sends nothing
        // before gRPC's first onReady): stop holding the log for it now. The runner sends the
        // status if the stream ever becomes ready; otherwise gRPC cancels the call.
        hub.remove(this);
      }
      return;
    }
    if (!started) {
      return;
    }
    if (lag > 0 && eventWait(nowNanos) <= 0) {
      schedule();
    } else if (nowNanos - lastSendNanos >= progressIntervalNanos) {
      progressDue = true;
      schedule();
    }
  }

  /** gRPC's onReady handler: the stream can take messages (again). */
  void onReady() {
    readied = true;
    schedule();
  }

  void schedule() {
    if (scheduled.compareAndSet(false, true)) {
      try {
        senders.execute(this::run);
      } catch (RejectedExecutionException stopping) {
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
          out.onError(
              Status.INTERNAL
                  .withDescription("watch failed on this node: " + e)
                  .asRuntimeException());
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
    if (!readied) {
      return false; // gRPC's first onReady schedules us
    }
    if (!started) {
      // gRPC's first onReady came while this run was under way (so its schedule() was a no-op)
      // and after this run had looked: nothing else would start the watcher.
      return true;
    }
    if (closeRequested()) {
      return true;
    }
    // Whether there is anything to send is asked first: gRPC's isReady takes the stream's lock,
    // which its event loop also takes for every write; asked three times a message, it was a
    // seventh of the sender's time with a thousand watchers (docs/performance.md).
    if (!((unread() && eventWait(System.nanoTime()) <= 0) || progressDue)) {
      return false;
    }
    return out.isReady(); // if not, the onReady handler schedules us
  }

  private synchronized boolean closeRequested() {
    return closeWith != null;
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
      if (!readied) {
        return; // gRPC's first onReady schedules us
      }
      if (closeRequested()) {
        // Closed (cut off, or the node stopping) before the stream was ever ready: the status
        // alone, with the revision to resume from as it was then, not a start that claims more.
        started = true;
      } else {
        start();
        if (closed) {
          return;
        }
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
      // Read the hub's revision before the log: every entry up to it was appended before it was
      // published.
      long applied = hub.appliedRevision();
      boolean events = unread();
      if (events && eventWait(System.nanoTime()) > 0) {
        return; // the hub's ticker wakes us when the interval has passed
      }
      if (!events && !progressDue) {
        return; // nothing to send (see pending() for why gRPC is not asked first)
      }
      if (!out.isReady()) {
        return; // the onReady handler schedules us again
      }
      if (events) {
        if (sendNext()) {
          progressDue = false;
          continue;
        }
      }
      if (progressDue) {
        progressDue = false;
        send(Math.max(sentRevision, applied));
      }
      return;
    }
  }

  /**
   * Sends the next message of events from the cursor, if any match, and moves the cursor past what
   * it read; returns whether it sent one. The message is the group's last one when this watcher
   * stands where that one was read from (see {@link WatchGroup}); otherwise this watcher reads the
   * log itself: up to where the group's last read ended if it is behind that, so that it shares
   * from its next message on, or else to the end of the log, leaving its read for the group's other
   * watchers.
   */
  private boolean sendNext() {
    WatchGroup.Read last = group.last;
    if (last != null && last.startSeq() == readSeq && sentRevision < last.firstRevision()) {
      node = last.endNode();
      index = last.endIndex();
      readSeq = last.endSeq();
      if (last.frame() == null) {
        // Nothing matched there. Read on to the end of the log before saying nothing was sent:
        // the caller's progress message claims everything the hub had applied before this call.
        return unread() && sendNext();
      }
      send(last.frame().shared(), true);
      // Counted from when the message was built: the group's watchers then come due together,
      // and the next message, built by the first of them, is as fresh for the others.
      lastSendNanos = last.builtNanos();
      return true;
    }
    long startSeq = readSeq;
    EventLog.Node first = index < node.events.size() ? node : node.next;
    long firstRevision = first.revision;
    boolean behind = last != null && last.endSeq() > readSeq;
    long stopSeq = behind ? last.endSeq() : Long.MAX_VALUE;
    // Sized for everything unread (at most a message's worth), so it never grows while read.
    List<WireEvent> batch =
        new ArrayList<>(
            (int)
                Math.max(
                    1,
                    Math.min(MAX_EVENTS_PER_MESSAGE, Math.min(log.endSeq(), stopSeq) - readSeq)));
    boolean splitsARevision = read(batch, stopSeq);
    WatchFrame frame =
        batch.isEmpty() ? null : framed(WatchFrame.of(batch, splitsARevision, basic));
    if (!behind && sentRevision < firstRevision) {
      // Every event read was new to this watcher, so the message is the same for any member
      // standing where this one stood.
      group.last =
          new WatchGroup.Read(
              startSeq, firstRevision, node, index, readSeq, frame, System.nanoTime());
    }
    if (frame == null) {
      // Nothing matched. If the read stopped at the group's position, what follows is read at once.
      return behind && unread() && sendNext();
    }
    send(frame, false);
    return true;
  }

  /**
   * Reads matching events from the cursor into {@code batch}, up to one message's worth and at most
   * to the log position {@code stopSeq}; returns whether more matching events of the batch's last
   * revision remain (an entry can carry more events than fit in one message, e.g. a ban of
   * thousands of leases).
   */
  private boolean read(List<WireEvent> batch, long stopSeq) {
    // A node is one entry: all its events share its revision, so whether they are new to this
    // stream is decided once per node. With a thousand watchers this loop runs for every event
    // and every watcher, and each event's revision was one more object to load.
    boolean newer = node.revision > sentRevision;
    while (true) {
      int end = node.endSeq > stopSeq ? (int) (stopSeq - node.startSeq()) : node.events.size();
      if (!newer) {
        index = Math.max(index, end);
      }
      while (index < end && batch.size() < MAX_EVENTS_PER_MESSAGE) {
        WireEvent e = node.events.get(index++);
        if (filter.matches(e)) {
          batch.add(e);
        }
      }
      EventLog.Node next = node.next;
      if (index < node.events.size() || next == null || node.endSeq >= stopSeq) {
        break; // a full message, the stop inside this node, or the end of what may be read
      }
      if (batch.size() == MAX_EVENTS_PER_MESSAGE) {
        break;
      }
      node = next;
      index = 0;
      newer = next.revision > sentRevision;
    }
    readSeq = node.startSeq() + index;
    if (!newer || batch.isEmpty() || batch.get(batch.size() - 1).revision() != node.revision) {
      return false;
    }
    for (int i = index; i < node.events.size(); i++) {
      if (filter.matches(node.events.get(i))) {
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
      send(hub.core().applied().index());
      return;
    }
    List<WireEvent> history = new ArrayList<>();
    LeaseCore.HistoryRead read =
        hub.core()
            .readHistory(
                startRevision,
                e -> {
                  if (filter.matches(e)) {
                    history.add(WireEvent.of(e));
                  }
                });
    if (read.compacted()) {
      close(
          Status.OUT_OF_RANGE.withDescription(
              "start_revision "
                  + startRevision
                  + " is compacted: the history starts at revision "
                  + read.compactRevision()
                  + "; list (which returns a revision R) and watch from R + 1"),
          WatchTrailers.compactRevision(read.compactRevision()));
      return;
    }
    for (int i = 0; i < history.size(); i += MAX_EVENTS_PER_MESSAGE) {
      int end = Math.min(history.size(), i + MAX_EVENTS_PER_MESSAGE);
      List<WireEvent> chunk = history.subList(i, end);
      boolean splitsARevision =
          end < history.size()
              && history.get(end).revision() == chunk.get(chunk.size() - 1).revision();
      send(framed(WatchFrame.of(chunk, splitsARevision, basic)), false);
    }
    // Everything up to the view's revision has been delivered, matching or not.
    send(Math.max(sentRevision, read.revision()));
  }

  private void close(Status status, Metadata trailers) {
    closed = true;
    hub.remove(this);
    out.onError(status.asRuntimeException(trailers));
  }

  /** A message with no events: where the stream stands. */
  private void send(long revision) {
    send(framed(new WatchFrame(List.of(), revision, basic)), false);
  }

  /** With the fields every message of the hub carries (a lease group's number). */
  private WatchFrame framed(WatchFrame frame) {
    byte[] fields = hub.frameFields();
    return fields.length == 0 ? frame : frame.withFields(fields);
  }

  private void send(WatchFrame frame, boolean shared) {
    // Compressed only where it pays: a message of a few events gains a few bytes at the price of
    // a (de)compression call on each side. A stream whose client did not accept compression
    // ignores this.
    out.setMessageCompression(frame.length() >= COMPRESS_FROM_BYTES);
    out.onNext(frame);
    if (!frame.events().isEmpty()) {
      hub.sentEvents(shared);
    }
    sentRevision = Math.max(sentRevision, frame.revision());
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
}
