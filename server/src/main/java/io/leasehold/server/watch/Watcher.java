package io.leasehold.server.watch;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.proto.v1.Event;
import io.leasehold.statemachine.core.LeaseCore;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One Watch stream. The apply thread only appends matching events to a bounded queue; everything
 * the stream sends (history, live events, progress, the final status) is sent by one serialized
 * runner on the hub's sender pool, and only while gRPC says the stream is ready. A watcher whose
 * queue outgrows its bound is cut off with the revision to resume from: a slow watcher costs
 * writes nothing.
 */
final class Watcher {
  static final Metadata.Key<String> COMPACT_REVISION = Metadata.Key.of("leasehold-compact-revision", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> RESUME_REVISION = Metadata.Key.of("leasehold-resume-revision", Metadata.ASCII_STRING_MARSHALLER);
  private static final int MAX_EVENTS_PER_MESSAGE = 1000;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Watcher.class);

  private final WatchHub hub;
  private final WatchFilter filter;
  private final ServerCallStreamObserver<WatchFrame> out;
  private final Executor senders;
  private final int queueLimit;
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private final AtomicBoolean timerArmed = new AtomicBoolean();

  // Guarded by this.
  private final ArrayDeque<WireEvent> queue = new ArrayDeque<>();
  private Status closeWith;
  private Metadata closeTrailers;

  // Touched only by the serialized runner.
  private final long startRevision;
  private boolean started;
  private boolean closed;
  /** Every matching event up to this revision has been sent (read by other threads for the resume revision). */
  private volatile long sentRevision;
  private volatile long lastSendNanos = System.nanoTime();
  private volatile boolean progressDue;

  Watcher(WatchHub hub, WatchFilter filter, long startRevision, ServerCallStreamObserver<WatchFrame> out, Executor senders, int queueLimit) {
    this.hub = hub;
    this.filter = filter;
    this.startRevision = startRevision;
    this.out = out;
    this.senders = senders;
    this.queueLimit = queueLimit;
  }

  WatchFilter filter() {
    return filter;
  }

  /** From the apply thread: never blocks on the stream. */
  void offer(List<WireEvent> events) {
    boolean added = false;
    synchronized (this) {
      if (closeWith != null) {
        return;
      }
      for (WireEvent e : events) {
        if (filter.matches(e.event())) {
          queue.add(e);
          added = true;
        }
      }
      if (queue.size() > queueLimit) {
        long resume = resumeRevision();
        closeWith = Status.RESOURCE_EXHAUSTED.withDescription("watcher fell more than " + queueLimit
            + " events behind and was cancelled; resume with start_revision=" + resume);
        closeTrailers = trailer(RESUME_REVISION, resume);
        queue.clear();
      }
    }
    if (closeWith != null) {
      schedule();
    } else if (added) {
      wake(System.nanoTime());
    }
  }

  /**
   * New events are queued: send now, or, while the hub coalesces (it has many watchers), once
   * the interval since this stream's last message has passed, so that each message carries
   * every event of that interval.
   */
  private void wake(long nowNanos) {
    long wait = eventWait(nowNanos);
    if (wait <= 0) {
      schedule();
    } else if (timerArmed.compareAndSet(false, true)) {
      hub.later(this::timerFired, wait);
    }
  }

  private void timerFired() {
    timerArmed.set(false);
    schedule();
  }

  /**
   * Nanoseconds until this stream may send its queued events (0 or less: now). A full message's
   * worth is sent at once: waiting would make it no cheaper, and a backlog must drain at full speed.
   */
  private long eventWait(long nowNanos) {
    long interval = hub.coalesceNanos();
    if (interval == 0) {
      return 0;
    }
    synchronized (this) {
      if (queue.size() >= MAX_EVENTS_PER_MESSAGE) {
        return 0;
      }
    }
    return lastSendNanos + interval - nowNanos;
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

  void progressIfIdle(long nowNanos, long intervalNanos) {
    if (started && nowNanos - lastSendNanos >= intervalNanos) {
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
      return closeWith != null
          || (!queue.isEmpty() && out.isReady() && eventWait(System.nanoTime()) <= 0)
          || (progressDue && out.isReady());
    }
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
      // Read the hub's revision before looking at the queue: events up to it were queued before it was published.
      long applied = hub.appliedRevision();
      List<WireEvent> batch = new ArrayList<>();
      boolean splitsARevision;
      boolean hasEvents;
      synchronized (this) {
        hasEvents = !queue.isEmpty();
      }
      long now = System.nanoTime();
      if (hasEvents && eventWait(now) > 0) {
        wake(now);  // arms the timer that sends them; a due progress message is not needed then
        return;
      }
      synchronized (this) {
        while (batch.size() < MAX_EVENTS_PER_MESSAGE && !queue.isEmpty()) {
          WireEvent e = queue.pollFirst();
          if (e.revision() > sentRevision) {
            batch.add(e);
          }
        }
        splitsARevision = !batch.isEmpty() && !queue.isEmpty()
            && queue.peekFirst().revision() == batch.get(batch.size() - 1).revision();
      }
      if (!batch.isEmpty()) {
        send(batch, completeThrough(batch, splitsARevision));
        continue;
      }
      if (progressDue) {
        progressDue = false;
        send(List.of(), Math.max(sentRevision, applied));
      }
      return;
    }
  }

  /** History from the start revision (or nothing, from now on), then live events. */
  private void start() {
    started = true;
    if (startRevision == 0) {
      // From now on: everything in the store counts as seen; tell the client where it starts.
      // The store's index, not the hub's: an entry is in the store before its events are
      // offered, so one whose offer this watcher missed while registering is before its start.
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
   * revision follow in the next message (an entry can carry more events than fit in one, e.g. a
   * ban of thousands of leases). Then only the revision before: a client that resumes from the
   * claimed revision + 1 must still get the rest.
   */
  private static long completeThrough(List<WireEvent> events, boolean splitsARevision) {
    long last = events.get(events.size() - 1).revision();
    return splitsARevision ? last - 1 : last;
  }

  private void send(List<WireEvent> events, long revision) {
    out.onNext(new WatchFrame(events, revision));
    sentRevision = Math.max(sentRevision, revision);
    lastSendNanos = System.nanoTime();
  }

  /** The client went away. */
  void cancelled() {
    synchronized (this) {
      closeWith = Status.CANCELLED;
      queue.clear();
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
