package io.leasehold.server.api;

import io.leasehold.statemachine.core.ApplyResult;
import io.leasehold.statemachine.core.ServiceVersions;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The blocking Resolve calls this node holds: each waits for its service's version to rise above
 * the one it gave, or for its wait to be over. Told of every entry this node applies; a change to a
 * service's instances wakes its waiters, which read again. Not replicated: a node that stops drops
 * its waiters (their calls fail UNAVAILABLE and may be sent again); a node that installs a snapshot
 * hears of no event, so its waiters answer when their wait is over, with the state then.
 */
public final class ServiceWaits implements AutoCloseable {
  /** The most blocking Resolve calls one node holds at once. */
  static final int MAX_WAITERS = 10_000;

  private final Map<String, Set<Waiter>> byService = new ConcurrentHashMap<>();
  private final AtomicInteger waiting = new AtomicInteger();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "leasehold-service-waits");
            t.setDaemon(true);
            return t;
          });

  /** One blocking call: woken on each change to its service above {@code above}. */
  final class Waiter {
    private final String service;
    private final long above;
    private final Runnable wake;
    private ScheduledFuture<?> timeout;

    private Waiter(String service, long above, Runnable wake) {
      this.service = service;
      this.above = above;
      this.wake = wake;
    }

    /** Stops waiting: neither a change nor the timeout wakes it any more. */
    void cancel() {
      Set<Waiter> set = byService.get(service);
      if (set != null && set.remove(this)) {
        waiting.decrementAndGet();
        byService.computeIfPresent(service, (k, v) -> v.isEmpty() ? null : v);
      }
      ScheduledFuture<?> t = timeout;
      if (t != null) {
        t.cancel(false);
      }
    }
  }

  /**
   * Waits for a change to {@code service} above version {@code above}: runs {@code wake} (off the
   * apply thread) on each, and {@code timedOut} once {@code waitNanos} have passed; null if this
   * node holds too many already.
   */
  Waiter await(String service, long above, long waitNanos, Runnable wake, Runnable timedOut) {
    if (waiting.incrementAndGet() > MAX_WAITERS) {
      waiting.decrementAndGet();
      return null;
    }
    Waiter w = new Waiter(service, above, wake);
    byService.computeIfAbsent(service, k -> ConcurrentHashMap.newKeySet()).add(w);
    w.timeout = timer.schedule(timedOut, waitNanos, TimeUnit.NANOSECONDS);
    return w;
  }

  /** Blocking calls held now. */
  public int waiting() {
    return waiting.get();
  }

  /** Called for every applied entry: wakes the waiters of each service it changed. */
  public void onApplied(ApplyResult result) {
    if (byService.isEmpty() || result.events().isEmpty()) {
      return;
    }
    for (String service : ServiceVersions.changedBy(result.events())) {
      Set<Waiter> set = byService.get(service);
      if (set != null) {
        for (Waiter w : set) {
          if (w.above < result.revision()) {
            timer.execute(w.wake);
          }
        }
      }
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
