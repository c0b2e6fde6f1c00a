package io.leasehold.server.watch;

import io.grpc.Status;
import io.grpc.netty.shaded.io.netty.util.concurrent.FastThreadLocalThread;
import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.proto.v1.EventView;
import io.leasehold.proto.v1.PlacementResponse;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.Events;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.core.LeaseEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;

/**
 * Fans the events of every applied entry out to this node's watchers, leader or follower alike:
 * each node serves Watch from its own applied state, so every node streams the same events in the
 * same order.
 */
public final class WatchHub implements WatchService, AutoCloseable {
  private final Supplier<LeaseCore> core;

  /** Namespaces this group dropped (moved away), until they return. */
  private final Set<String> departures = ConcurrentHashMap.newKeySet();

  /** See {@link #frameFields()}; built on first use, once the group's state exists. */
  private volatile byte[] frameFields;

  private final int queueLimit;
  private final long progressIntervalNanos;
  private final Set<Watcher> watchers = ConcurrentHashMap.newKeySet();

  /** Watchers by filter and view, to share their messages (see {@link WatchGroup}). */
  private final ConcurrentHashMap<WatchGroup.Key, WatchGroup> groups = new ConcurrentHashMap<>();

  /** Event messages sent, and how many of them were built by another watcher of the same group. */
  private final LongAdder eventMessages;

  private final LongAdder sharedMessages;
  private final AtomicInteger renewalWatchers = new AtomicInteger();
  private final ExecutorService senders;
  private final ScheduledExecutorService ticker;
  private final EventLog log = new EventLog();

  /**
   * The hubs of this node's lease groups ({@link #forGroup}), which share this hub's threads and
   * counters; null in such a hub itself.
   */
  private final List<WatchHub> groupHubs;

  /**
   * Held while a watcher takes the log's end as its cursor and joins {@link #watchers}, and while
   * the ticker trims the log behind every cursor: a watcher between the two steps has a cursor that
   * no trim would see.
   */
  private final Object cursors = new Object();

  /** Every event up to this revision is in the log (or was applied while nobody watched). */
  private volatile long appliedRevision;

  /**
   * The namespaces this group adopted in moves while this hub ran, each adoption's placement (its
   * revision, the group it came from and that group's Freeze entry), oldest first: a watch across
   * groups keeps the order of a moved namespace's events by them, even once the namespace has moved
   * on and this group no longer records where it came from.
   */
  private final Map<String, List<PlacementResponse>> arrivals = new ConcurrentHashMap<>();

  /** Event messages per second the hub aims to send to all its watchers together, at most. */
  private final int messageRate;

  /** However many watchers there are, none waits longer than this for a message. */
  private final long maxDelayNanos;

  /** Least time between two event messages to one watcher; 0: send as soon as events arrive. */
  private volatile long coalesceNanos;

  /** Default for {@code messageRate}; see {@link #coalesceNanos()}. */
  public static final int DEFAULT_MESSAGE_RATE = 10_000;

  /**
   * Below this, coalescing would save little and cost latency: watchers get every entry at once.
   * Also the least max delay a hub takes.
   */
  public static final long MIN_COALESCE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** Default for the most a watcher waits for a message, however many watchers there are. */
  public static final Duration DEFAULT_MAX_DELAY = Duration.ofMillis(100);

  /**
   * The default number of sender threads: half the cores, at least one. Sending is CPU work that
   * competes with the Raft pipeline, whose every write passes through a chain of threads; with more
   * senders than that, a burst of sends (many watchers' coalescing intervals ending in one tick)
   * held both cores of a two-core node, and every hop of every write waited behind it. With 1,000
   * watchers on a two-core machine, one sender instead of four kept 0.78 and 0.82 of the acquire
   * throughput without watchers, against 0.66 and 0.71, alternating in one run (see
   * docs/performance.md).
   */
  public static int defaultSenders() {
    return Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
  }

  public WatchHub(
      Supplier<LeaseCore> core,
      int queueLimit,
      Duration progressInterval,
      int messageRate,
      int senderThreads) {
    this(core, queueLimit, progressInterval, messageRate, DEFAULT_MAX_DELAY, senderThreads);
  }

  public WatchHub(
      Supplier<LeaseCore> core,
      int queueLimit,
      Duration progressInterval,
      int messageRate,
      Duration maxDelay,
      int senderThreads) {
    if (messageRate <= 0) {
      throw new IllegalArgumentException(
          "watch message rate: must be positive, got " + messageRate);
    }
    if (maxDelay.toNanos() < MIN_COALESCE_NANOS) {
      throw new IllegalArgumentException("watch max delay: must be at least 1ms, got " + maxDelay);
    }
    if (senderThreads <= 0) {
      throw new IllegalArgumentException("watch senders: must be positive, got " + senderThreads);
    }
    this.messageRate = messageRate;
    this.maxDelayNanos = maxDelay.toNanos();
    this.core = core;
    this.queueLimit = queueLimit;
    this.progressIntervalNanos = progressInterval.toNanos();
    AtomicInteger n = new AtomicInteger();
    this.senders =
        Executors.newFixedThreadPool(
            senderThreads, r -> daemon(sender(r, "leasehold-watch-" + n.incrementAndGet())));
    this.ticker =
        Executors.newSingleThreadScheduledExecutor(
            r -> daemon(new Thread(r, "leasehold-watch-ticker")));
    this.eventMessages = new LongAdder();
    this.sharedMessages = new LongAdder();
    this.groupHubs = new java.util.concurrent.CopyOnWriteArrayList<>();
    ticker.schedule(this::tick, tickNanos(), TimeUnit.NANOSECONDS);
  }

  /** A lease group's hub: the same settings, threads and counters as {@code node}'s. */
  private WatchHub(WatchHub node, Supplier<LeaseCore> core) {
    this.messageRate = node.messageRate;
    this.maxDelayNanos = node.maxDelayNanos;
    this.core = core;
    this.queueLimit = node.queueLimit;
    this.progressIntervalNanos = node.progressIntervalNanos;
    this.senders = node.senders;
    this.ticker = node.ticker;
    this.eventMessages = node.eventMessages;
    this.sharedMessages = node.sharedMessages;
    this.groupHubs = null;
    ticker.schedule(this::tick, tickNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * A hub for the events of one lease group (docs/design/multi-raft.md, "Watches"): its own log,
   * watchers and revisions, on this hub's sender threads and ticker, so that a node's watch sending
   * stays within the same threads however many groups it hosts. Its watchers and messages count in
   * this hub's figures; it closes with this hub.
   */
  public WatchHub forGroup(Supplier<LeaseCore> groupCore) {
    if (groupHubs == null) {
      throw new IllegalStateException("a lease group's hub has no groups of its own");
    }
    WatchHub hub = new WatchHub(this, groupCore);
    groupHubs.add(hub);
    return hub;
  }

  /**
   * Forgets a lease group's hub ({@link #forGroup}) whose group this node no longer hosts, and ends
   * its streams with UNAVAILABLE and {@code why}.
   */
  public void dropGroup(WatchHub hub, String why) {
    if (groupHubs != null && groupHubs.remove(hub)) {
      for (Watcher w : hub.watchers) {
        w.close(Status.UNAVAILABLE.withDescription(why));
      }
    }
  }

  /** This hub and its lease groups' hubs. */
  private List<WatchHub> withGroups() {
    if (groupHubs == null || groupHubs.isEmpty()) {
      return List.of(this);
    }
    List<WatchHub> all = new ArrayList<>(1 + groupHubs.size());
    all.add(this);
    all.addAll(groupHubs);
    return all;
  }

  private static Thread daemon(Thread t) {
    t.setDaemon(true);
    return t;
  }

  /**
   * A sender thread is one of Netty's own ({@code FastThreadLocalThread}): gRPC frames every
   * message a sender passes to {@code onNext} in a pooled direct buffer it takes on that thread,
   * and Netty gives a per-thread buffer cache only to its own threads (unless a system property
   * says otherwise for the whole JVM). Without one, each of the many thousand messages a second
   * took its buffer from the shared arena under its locks, and the event loop that wrote it gave it
   * back there: the pool's chunks emptied, were freed, and were allocated and zeroed again at the
   * next burst of sends. With the cache a freed buffer goes back to the sender that took it, up to
   * the cache's size.
   */
  private static Thread sender(Runnable r, String name) {
    return new FastThreadLocalThread(r, name);
  }

  /**
   * From the apply thread, after the entry is committed to the store. Never blocks, and costs the
   * same however many watch: the events are appended to the shared log once; watchers read it from
   * their own cursors. Only while few watch (no coalescing) does it wake each of them.
   */
  public void onApplied(ApplyResult result) {
    List<WireEvent> events =
        result.events().isEmpty() || watchers.isEmpty() ? List.of() : live(result);
    if (!events.isEmpty()) {
      log.append(events, result.revision());
    }
    appliedRevision = result.revision();
    if (!events.isEmpty() && coalesceNanos == 0) {
      for (Watcher w : watchers) {
        w.schedule();
      }
    }
    if (result.reply().hasDropNamespace()) {
      String ns = result.reply().getDropNamespace().getNamespace();
      departures.add(ns);
      movedAway(ns);
    }
    PlacementResponse switched = result.reply().getFinishMove();
    if (result.reply().hasFinishMove()
        && switched.getGroup() != 0
        && switched.getRevision() == result.revision()) {
      // The meta group placed a namespace on a lease group in this entry: if it was the meta
      // group's own, its watches here hear nothing more of it.
      movedAway(switched.getNamespace());
    }
    PlacementResponse adopted = result.reply().getAdoptNamespace();
    if (result.reply().hasAdoptNamespace()) {
      departures.remove(adopted.getNamespace());
    }
    if (result.reply().hasAdoptNamespace()
        && adopted.getMovedFrom() != 0
        && adopted.getRevision() == result.revision()) {
      arrivals
          .computeIfAbsent(
              adopted.getNamespace(), ns -> new java.util.concurrent.CopyOnWriteArrayList<>())
          .add(adopted);
    }
  }

  /** Whether this hub saw this group drop {@code namespace} and has not seen it come back. */
  boolean departed(String namespace) {
    return departures.contains(namespace);
  }

  /**
   * The move that brought {@code namespace} here most recently at or before {@code revision}: from
   * this hub's record of adoptions, else from the group's placement (an adoption before this hub
   * started, of a namespace the group still holds); empty if none.
   */
  Optional<PlacementResponse> arrivalBefore(String namespace, long revision) {
    List<PlacementResponse> seen = arrivals.getOrDefault(namespace, List.of());
    for (int i = seen.size() - 1; i >= 0; i--) {
      if (seen.get(i).getRevision() <= revision) {
        return Optional.of(seen.get(i));
      }
    }
    return core()
        .placement(namespace)
        .filter(p -> p.getMovedFrom() != 0 && p.getRevision() <= revision);
  }

  /**
   * A namespace moved to another group and this group dropped it: a watch that stays within it
   * would hear nothing more here, so it ends, and its client lists again (the list reads the
   * namespace's new group and says which) and watches from there, as after a compaction. A watch of
   * one namespace never changes group: its revisions are one group's.
   */
  private void movedAway(String namespace) {
    String prefix = namespace + "/";
    for (Watcher w : watchers) {
      if (w.filter().prefix().startsWith(prefix)) {
        w.close(
            Status.OUT_OF_RANGE.withDescription(
                "namespace "
                    + namespace
                    + " moved to another lease group, whose revisions are not this one's;"
                    + " list (which returns a revision R and its group) and watch from R + 1"));
      }
    }
  }

  /**
   * The fields every message of this hub carries after its revision: a lease group's number, so a
   * watch of one namespace knows whose revisions it was sent (none for the meta group's hub).
   */
  byte[] frameFields() {
    byte[] fields = frameFields;
    if (fields == null) {
      int group = core().group();
      fields =
          group == 0
              ? new byte[0]
              : io.leasehold.proto.v1.WatchResponse.newBuilder()
                  .setGroup(group)
                  .build()
                  .toByteArray();
      frameFields = fields;
    }
    return fields;
  }

  /**
   * The entry's events in API form, built once and shared by every watcher: the kept ones, plus
   * renewals if anyone asked for them.
   */
  private List<WireEvent> live(ApplyResult result) {
    boolean renewals = renewalWatchers.get() > 0;
    List<WireEvent> all = new ArrayList<>(result.events().size());
    for (LeaseEvent e : result.events()) {
      if (renewals || Events.kept(e)) {
        all.add(WireEvent.of(Events.toApi(e)));
      }
    }
    return all;
  }

  /**
   * The least time between two event messages to one watcher. Every message costs the node about
   * the same whatever it carries (framing, a transport write and flush, the client's wake-up), so
   * with many watchers an event per message would take the cores from the state machine: a thousand
   * watchers of a 3,000 acquisitions/s stream are three million messages a second. So the hub
   * spreads a budget of {@code messageRate} messages per second over its watchers: with N watchers
   * each gets one message per N / messageRate seconds, carrying everything that happened meanwhile.
   * (A watcher that joins its group's schedule, see {@link Watcher}, may get one message sooner,
   * once.) A few watchers (under 1 ms) are not delayed at all; many wait at most the hub's max
   * delay. Order, gaps and resume revisions are unaffected: only when a message goes out changes.
   */
  long coalesceNanos() {
    return coalesceNanos;
  }

  private void updateCoalescing() {
    coalesceNanos = coalesceNanos(watchers.size(), messageRate, maxDelayNanos);
  }

  /** The coalescing interval for {@code watchers} sharing {@code messageRate} messages a second. */
  static long coalesceNanos(int watchers, int messageRate, long maxDelayNanos) {
    long interval = (long) (watchers * (1e9 / messageRate));
    return interval < MIN_COALESCE_NANOS ? 0 : Math.min(interval, maxDelayNanos);
  }

  /**
   * The ticker's period: a quarter of the coalescing interval (so a watcher waits at most a quarter
   * longer than it), or of the progress interval while nothing is coalesced.
   */
  private long tickNanos() {
    long c = coalesceNanos;
    return Math.max(
        TimeUnit.MILLISECONDS.toNanos(1),
        (c > 0 ? Math.min(c, progressIntervalNanos) : progressIntervalNanos) / 4);
  }

  /** Wakes due watchers, sends progress to idle ones, and cuts off those too far behind. */
  private void tick() {
    try {
      long now = System.nanoTime();
      for (Watcher w : watchers) {
        w.tick(now, progressIntervalNanos);
      }
      trimLog();
    } catch (RuntimeException e) {
      LoggerFactory.getLogger(WatchHub.class).warn("watch ticker", e);
    }
    try {
      ticker.schedule(this::tick, tickNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closing) {
      // The hub is closing.
    }
  }

  /** Unlinks the log's nodes that every watcher has read past (see {@link EventLog#trimBefore}). */
  private void trimLog() {
    synchronized (cursors) {
      long least = log.endSeq();
      for (Watcher w : watchers) {
        least = Math.min(least, w.readSeq());
      }
      log.trimBefore(least);
    }
  }

  @Override
  public void watch(WatchRequest request, ServerCallStreamObserver<WatchFrame> out) {
    Watcher watcher = open(request, out);
    out.setOnCancelHandler(watcher::cancelled);
    out.setOnReadyHandler(watcher::onReady);
  }

  /**
   * Starts a watch whose stream's cancel and ready handlers the caller forwards to the returned
   * stream itself (gRPC takes them only while the service method runs, which may be before the
   * watch's group is known).
   */
  public WatchStream start(WatchRequest request, ServerCallStreamObserver<WatchFrame> out) {
    Watcher watcher = open(request, out);
    return new WatchStream() {
      @Override
      public void ready() {
        watcher.onReady();
      }

      @Override
      public void cancelled() {
        watcher.cancelled();
      }

      @Override
      public void close(Status status) {
        watcher.close(status);
      }
    };
  }

  /** A started watch, told what happens to its stream. */
  public interface WatchStream {
    /** The stream can take messages (again). */
    void ready();

    /** The client went away. */
    void cancelled();

    /** Ends the stream with {@code status} once what it holds is sent. */
    void close(Status status);
  }

  private Watcher open(WatchRequest request, ServerCallStreamObserver<WatchFrame> out) {
    WatchFilter filter = WatchFilter.of(request);
    WatchGroup.Key key =
        new WatchGroup.Key(filter, request.getView() == EventView.EVENT_VIEW_BASIC);
    WatchGroup group =
        groups.compute(
            key,
            (k, g) -> {
              WatchGroup joined = g == null ? new WatchGroup(k) : g;
              joined.members++;
              return joined;
            });
    Watcher watcher;
    synchronized (cursors) {
      watcher = new Watcher(this, log, group, request.getStartRevision(), out, senders, queueLimit);
      if (filter.wantsRenewals()) {
        renewalWatchers.incrementAndGet();
      }
      // Registered before its history is read: nothing applied in between can be missed, and
      // what arrives twice is dropped by revision. An entry applied now may wake the watcher at
      // once, but it starts sending only when gRPC first reports the stream ready, which it does
      // once this method has returned: a ServerCall must not be used from two threads at once,
      // and gRPC's own thread is still in this call.
      watchers.add(watcher);
    }
    updateCoalescing();
    return watcher;
  }

  void remove(Watcher watcher) {
    if (watchers.remove(watcher)) {
      updateCoalescing();
      groups.computeIfPresent(watcher.group().key, (k, g) -> --g.members == 0 ? null : g);
      if (watcher.filter().wantsRenewals()) {
        renewalWatchers.decrementAndGet();
      }
    }
  }

  long appliedRevision() {
    return appliedRevision;
  }

  /** The shared log, for tests of its trimming. */
  EventLog log() {
    return log;
  }

  LeaseCore core() {
    return core.get();
  }

  /** Watchers of this hub and of its lease groups' hubs. */
  public int watchers() {
    int n = 0;
    for (WatchHub h : withGroups()) {
      n += h.watchers.size();
    }
    return n;
  }

  /**
   * How many events of the shared log the furthest-behind watcher has yet to read (0 with none): a
   * watcher cut off at the queue limit had reached it.
   */
  public long maxLagEvents() {
    long lag = 0;
    for (WatchHub h : withGroups()) {
      long end = h.log.endSeq();
      for (Watcher w : h.watchers) {
        lag = Math.max(lag, end - w.readSeq());
      }
    }
    return lag;
  }

  /** Groups of watchers with the same filter and view (see {@link WatchGroup}), in every hub. */
  public int watchGroups() {
    int n = 0;
    for (WatchHub h : withGroups()) {
      n += h.groups.size();
    }
    return n;
  }

  /** Messages with events sent to watchers since the node started. */
  public long eventMessages() {
    return eventMessages.sum();
  }

  /** Of {@link #eventMessages()}, those another watcher of the same group had built. */
  public long sharedMessages() {
    return sharedMessages.sum();
  }

  void sentEvents(boolean shared) {
    eventMessages.increment();
    if (shared) {
      sharedMessages.increment();
    }
  }

  /** Ends every stream with UNAVAILABLE and the revision to resume from on another node. */
  @Override
  public void close() {
    for (WatchHub h : withGroups()) {
      for (Watcher w : h.watchers) {
        w.close(
            Status.UNAVAILABLE.withDescription(
                "this node is stopping; resume the watch on another node"));
      }
    }
    if (groupHubs == null) {
      return; // a lease group's hub: the node's closes the threads
    }
    ticker.shutdownNow();
    senders.shutdown();
    try {
      senders.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    senders.shutdownNow();
  }
}
