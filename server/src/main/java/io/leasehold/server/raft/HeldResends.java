package io.leasehold.server.raft;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Writes a node holds between two attempts to reach the leader. Each runs once: after its pause, or
 * as soon as the node learns of a new leader or becomes a ready leader itself ({@link #wakeAll}),
 * whichever comes first. Without the early wake, writes held through an election waited out their
 * pause (up to 200 ms) after the new leader was ready, and the writes batched behind them waited
 * with them. A write whose attempt was still out when the node woke the held ones (it failed
 * against the old leader a moment after the new one was known) is not held at all: it names the
 * wakes it has seen ({@link #wakes}), and one that missed a wake runs at once, as if woken.
 */
final class HeldResends {
  private final Set<Held> held = ConcurrentHashMap.newKeySet();
  private final AtomicLong wakes = new AtomicLong();
  private final Executor wakeExecutor;

  /** Woken resends run where the timed ones do: CompletableFuture's async pool. */
  HeldResends() {
    this(CompletableFuture::runAsync);
  }

  /**
   * {@code wakeExecutor} runs woken resends: never the thread of the Raft callback that wakes them.
   */
  HeldResends(Executor wakeExecutor) {
    this.wakeExecutor = wakeExecutor;
  }

  /**
   * How many times the held resends were woken so far: read it before an attempt, give it to {@link
   * #pause}.
   */
  long wakes() {
    return wakes.get();
  }

  /**
   * Runs {@code resend} after {@code millis}, or earlier when woken; it gets {@code true} when
   * woken.
   */
  void pause(long millis, Consumer<Boolean> resend) {
    pause(millis, wakes.get(), resend);
  }

  /**
   * As {@link #pause(long, Consumer)} for an attempt sent when {@link #wakes} was {@code seen}: if
   * a wake came since, {@code resend} runs now, woken.
   */
  void pause(long millis, long seen, Consumer<Boolean> resend) {
    Held h = new Held(resend);
    // Added before the check: a wake that counts after it still finds the resend held.
    held.add(h);
    if (wakes.get() != seen) {
      wakeExecutor.execute(() -> h.run(true));
      return;
    }
    CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS).execute(() -> h.run(false));
  }

  /** Runs every held resend now. */
  void wakeAll() {
    wakes.incrementAndGet();
    for (Held h : held) {
      wakeExecutor.execute(() -> h.run(true));
    }
  }

  /** Resends waiting now. */
  int size() {
    return held.size();
  }

  private final class Held {
    private final Consumer<Boolean> resend;
    private final AtomicBoolean ran = new AtomicBoolean();

    Held(Consumer<Boolean> resend) {
      this.resend = resend;
    }

    void run(boolean woken) {
      if (ran.compareAndSet(false, true)) {
        held.remove(this);
        resend.accept(woken);
      }
    }
  }
}
