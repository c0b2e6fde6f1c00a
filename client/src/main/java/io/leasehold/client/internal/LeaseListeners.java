package io.leasehold.client.internal;

import io.leasehold.client.LeaseListener;
import io.leasehold.client.LeaseTransition;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listeners of one lease handle, told of its transitions one at a time and in order on the
 * callback executor. A listener added after the final transition is told of it at once.
 */
final class LeaseListeners {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseListeners.class);

  private final SerialExecutor events;
  private final CompletableFuture<LeaseTransition> ended = new CompletableFuture<>();

  // Guarded by this.
  private final List<LeaseListener> listeners = new ArrayList<>();
  private LeaseTransition finalTransition;

  LeaseListeners(Executor callbacks) {
    this.events = new SerialExecutor(callbacks);
  }

  /**
   * Queues {@code t} for the listeners added so far without running it: the handle calls this under
   * its own lock, so transitions queue in the order they happened, and {@link #flush} after.
   */
  synchronized void queue(LeaseTransition t) {
    if (t.to().isFinal()) {
      finalTransition = t;
    }
    List<LeaseListener> targets = List.copyOf(listeners);
    events.enqueue(() -> deliver(t, targets));
  }

  /** Runs what {@link #queue} queued. */
  void flush() {
    events.flush();
  }

  void add(LeaseListener listener) {
    LeaseTransition done;
    synchronized (this) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
      done = finalTransition;
    }
    if (done != null) {
      events.execute(() -> deliver(done, List.of(listener)));
    }
  }

  synchronized boolean remove(LeaseListener listener) {
    return listeners.remove(listener);
  }

  /** Completes with the final transition, once the listeners have been told of it. */
  CompletableFuture<LeaseTransition> ended() {
    return ended.copy();
  }

  private void deliver(LeaseTransition t, List<LeaseListener> targets) {
    for (LeaseListener l : targets) {
      try {
        l.onTransition(t);
      } catch (RuntimeException e) {
        LOG.warn("lease listener threw on {}", t, e);
      }
    }
    if (t.to().isFinal()) {
      ended.complete(t);
    }
  }
}
