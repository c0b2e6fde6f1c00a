package io.leasehold.server.watch;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.leasehold.proto.v1.Event;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.Events;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.core.LeaseEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Fans the events of every applied entry out to this node's watchers, leader or follower alike:
 * each node serves Watch from its own applied state, so every node streams the same events in
 * the same order.
 */
public final class WatchHub implements AutoCloseable {
  private final Supplier<LeaseCore> core;
  private final int queueLimit;
  private final long progressIntervalNanos;
  private final Set<Watcher> watchers = ConcurrentHashMap.newKeySet();
  private final AtomicInteger renewalWatchers = new AtomicInteger();
  private final ExecutorService senders;
  private final ScheduledExecutorService progress;
  /** Every event up to this revision has been offered to every registered watcher. */
  private volatile long appliedRevision;

  public WatchHub(Supplier<LeaseCore> core, int queueLimit, Duration progressInterval) {
    this.core = core;
    this.queueLimit = queueLimit;
    this.progressIntervalNanos = progressInterval.toNanos();
    AtomicInteger n = new AtomicInteger();
    this.senders = Executors.newFixedThreadPool(4, r -> daemon(r, "leasehold-watch-" + n.incrementAndGet()));
    this.progress = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "leasehold-watch-progress"));
    long period = Math.max(1, progressIntervalNanos / 4);
    progress.scheduleAtFixedRate(this::progressIdleWatchers, period, period, TimeUnit.NANOSECONDS);
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** From the apply thread, after the entry is committed to the store. Never blocks. */
  public void onApplied(ApplyResult result) {
    if (!result.events().isEmpty() && !watchers.isEmpty()) {
      List<Event> events = live(result);
      if (!events.isEmpty()) {
        for (Watcher w : watchers) {
          w.offer(events);
        }
      }
    }
    appliedRevision = result.revision();
  }

  /**
   * The entry's events in API form, built once and shared by every watcher: the kept ones, plus
   * renewals if anyone asked for them.
   */
  private List<Event> live(ApplyResult result) {
    boolean renewals = renewalWatchers.get() > 0;
    List<Event> all = new ArrayList<>(result.events().size());
    for (LeaseEvent e : result.events()) {
      if (renewals || Events.kept(e)) {
        all.add(Events.toApi(e));
      }
    }
    return all;
  }

  /** Starts a watch; the request was validated by the API. */
  public void watch(WatchRequest request, ServerCallStreamObserver<WatchResponse> out) {
    WatchFilter filter = WatchFilter.of(request);
    Watcher watcher = new Watcher(this, filter, request.getStartRevision(), out, senders, queueLimit);
    out.setOnCancelHandler(watcher::cancelled);
    out.setOnReadyHandler(watcher::schedule);
    if (filter.wantsRenewals()) {
      renewalWatchers.incrementAndGet();
    }
    // Registered before its history is read: nothing applied in between can be missed, and
    // what arrives twice is dropped by revision. The watcher starts sending when gRPC reports the
    // stream ready, which it does once this method has returned: a ServerCall must not be used
    // from two threads at once, and gRPC's own thread is still in this call.
    watchers.add(watcher);
  }

  void remove(Watcher watcher) {
    if (watchers.remove(watcher) && watcher.filter().wantsRenewals()) {
      renewalWatchers.decrementAndGet();
    }
  }

  long appliedRevision() {
    return appliedRevision;
  }

  LeaseCore core() {
    return core.get();
  }

  public int watchers() {
    return watchers.size();
  }

  private void progressIdleWatchers() {
    long now = System.nanoTime();
    for (Watcher w : watchers) {
      w.progressIfIdle(now, progressIntervalNanos);
    }
  }

  /** Ends every stream with UNAVAILABLE and the revision to resume from on another node. */
  @Override
  public void close() {
    for (Watcher w : watchers) {
      w.close(Status.UNAVAILABLE.withDescription("this node is stopping; resume the watch on another node"));
    }
    progress.shutdownNow();
    senders.shutdown();
    try {
      senders.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    senders.shutdownNow();
  }
}
