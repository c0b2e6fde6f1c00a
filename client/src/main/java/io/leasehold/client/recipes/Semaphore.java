package io.leasehold.client.recipes;

import io.leasehold.client.AcquireRejectedException;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseListing;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.RejectReason;
import io.leasehold.client.Rejected;
import io.leasehold.client.Watch;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * A counting semaphore across processes: at most {@link #permits()} holders at once, each permit a
 * lease with its own fencing token ({@link LeaseholdClient#semaphore}).
 *
 * <pre>{@code
 * Semaphore pool = client.semaphore("semaphore/db-migrations", 3);
 * Lease permit = pool.acquire().join();                      // waits for a free permit
 * try {
 *   database.migrate(shard, permit.token());                 // fence the work with the permit's token
 * } finally {
 *   pool.release(permit).join();
 * }
 * Optional<Lease> maybe = pool.tryAcquire(Duration.ofSeconds(5)).join();  // empty after 5 s
 * }</pre>
 *
 * <p>Design: permit {@code i} is the exclusive lease {@code <name>/slot-<i>}, for i in [0, K). A
 * holder holds one slot lease per permit, and the cluster grants each slot to one holder at a time,
 * so there are never more than K holders; a permit is valid exactly as long as its lease (the SDK's
 * validity), so validity intervals of permits on the same slot never overlap either. Waiting lists
 * the slots, tries the free ones, and otherwise waits for a slot's lease to end through a watch
 * opened from the listing's revision (no event is missed, nothing is polled).
 *
 * <p>Every client must use the same K for a name. Each slot lease carries K in its metadata ({@code
 * permits}); an acquisition that sees a slot at or above its K, or a slot taken with another K,
 * fails with {@link IllegalStateException}. That check only sees holders present at the time: two
 * clients with different K that start on an idle semaphore are not refused, and the bound is then
 * the largest K among them.
 *
 * <p>Thread-safe. One client may hold several permits of the same semaphore.
 */
public final class Semaphore {
  private static final String PERMITS_KEY = "permits";
  private static final Duration LOCK_DELAY_RETRY = Duration.ofMillis(500);

  private final LeaseholdClient client;
  private final String name;
  private final int permits;
  private final LeaseOptions options;

  private Semaphore(LeaseholdClient client, String name, int permits, LeaseOptions options) {
    if (permits < 1) {
      throw new IllegalArgumentException("permits: must be at least 1, got " + permits);
    }
    this.client = Objects.requireNonNull(client, "client");
    this.name = Objects.requireNonNull(name, "name");
    this.permits = permits;
    this.options =
        Objects.requireNonNull(options, "options")
            .withMetadata(PERMITS_KEY, Integer.toString(permits));
  }

  /**
   * A semaphore of {@code permits} permits named {@code name}, whose permits live with the client's
   * session.
   *
   * @param client the client acquiring permits
   * @param name the semaphore's name, e.g. {@code semaphore/db-migrations}; permits are the leases
   *     below it
   * @param permits K, the most holders at once; every client of the name must use the same K
   * @return the semaphore
   */
  public static Semaphore of(LeaseholdClient client, String name, int permits) {
    return new Semaphore(client, name, permits, LeaseOptions.defaults());
  }

  /**
   * As {@link #of(LeaseholdClient, String, int)}, with the permits' lease options (e.g. a TTL of
   * their own); their wait bound is not used.
   *
   * @param client the client acquiring permits
   * @param name the semaphore's name
   * @param permits K, the most holders at once
   * @param options the permits' lease options
   * @return the semaphore
   */
  public static Semaphore of(
      LeaseholdClient client, String name, int permits, LeaseOptions options) {
    return new Semaphore(client, name, permits, options);
  }

  /**
   * The semaphore's name.
   *
   * @return the name
   */
  public String name() {
    return name;
  }

  /**
   * K, the most holders at once.
   *
   * @return the number of permits
   */
  public int permits() {
    return permits;
  }

  /**
   * Waits as long as it takes for a permit. Cancelling the future stops the wait.
   *
   * @return completes with the permit's lease; its token fences the work done under it
   */
  public CompletableFuture<Lease> acquire() {
    return new Attempt().start();
  }

  /**
   * Waits up to {@code waitUpTo} for a permit.
   *
   * @param waitUpTo how long to wait; a permit granted after that is given back at once
   * @return completes with the permit, or empty if none was free in time
   */
  public CompletableFuture<Optional<Lease>> tryAcquire(Duration waitUpTo) {
    Objects.requireNonNull(waitUpTo, "waitUpTo");
    Attempt attempt = new Attempt();
    CompletableFuture<Lease> permit = attempt.start();
    permit.completeOnTimeout(null, Math.max(0, waitUpTo.toNanos()), TimeUnit.NANOSECONDS);
    return permit.thenApply(Optional::ofNullable);
  }

  /**
   * Gives a permit back: its slot is free at once for the next waiter.
   *
   * @param permit a permit of this semaphore
   * @return completes when the cluster has answered
   * @throws IllegalArgumentException if the lease is not one of this semaphore's permits
   */
  public CompletableFuture<Void> release(Lease permit) {
    if (slotOf(permit.name()) < 0) {
      throw new IllegalArgumentException(
          "permit: " + permit.name() + " is not a permit of " + name);
    }
    return permit.state().isFinal() ? CompletableFuture.completedFuture(null) : permit.release();
  }

  private String prefix() {
    return name + "/slot-";
  }

  /** The slot index of a lease name below this semaphore, or -1. */
  private int slotOf(String leaseName) {
    if (!leaseName.startsWith(prefix())) {
      return -1;
    }
    try {
      return Integer.parseInt(leaseName.substring(prefix().length()));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** One acquisition: list, try the free slots, else wait for a slot's lease to end. */
  private final class Attempt implements WatchListener {
    private final CompletableFuture<Lease> result = new CompletableFuture<>();
    // Guarded by this.
    private Watch watch;
    private long lastEnd; // revision of the latest slot end seen
    private long waitingAfter = -1; // the listing revision a wait started from, or -1

    CompletableFuture<Lease> start() {
      result.whenComplete((l, e) -> closeWatch());
      round();
      return result;
    }

    private void round() {
      if (result.isDone()) {
        return;
      }
      client
          .list(prefix())
          .thenCompose(this::tryFree)
          .whenComplete(
              (outcome, error) -> {
                if (error != null) {
                  result.completeExceptionally(
                      error instanceof CompletionException ? error.getCause() : error);
                }
              });
    }

    private CompletableFuture<Void> tryFree(LeaseListing listing) {
      synchronized (this) {
        if (watch == null && !result.isDone()) {
          watch = client.watch(WatchOptions.of(prefix()).withStartAfter(listing), this);
        }
      }
      List<Integer> free = new ArrayList<>();
      boolean[] held = new boolean[permits];
      for (LeaseInfo l : listing.leases()) {
        int slot = slotOf(l.name());
        String theirs = l.attributes().metadata().get(PERMITS_KEY);
        if (slot < 0) {
          continue;
        }
        if (slot >= permits || (theirs != null && !theirs.equals(Integer.toString(permits)))) {
          throw new IllegalStateException(
              "semaphore "
                  + name
                  + ": "
                  + l.name()
                  + " is held with "
                  + theirs
                  + " permits, this client uses "
                  + permits);
        }
        held[slot] = true;
      }
      for (int i = 0; i < permits; i++) {
        if (!held[i]) {
          free.add(i);
        }
      }
      Collections.shuffle(
          free); // waiters spread over the free slots instead of all racing for the first
      return tryEach(free, 0, false, listing.revision());
    }

    private CompletableFuture<Void> tryEach(
        List<Integer> free, int i, boolean lockDelayed, long revision) {
      if (i == free.size()) {
        if (lockDelayed) { // a lock-delay ends without an event: look again shortly
          CompletableFuture.delayedExecutor(LOCK_DELAY_RETRY.toMillis(), TimeUnit.MILLISECONDS)
              .execute(this::round);
        } else {
          waitForAnEndAfter(revision);
        }
        return CompletableFuture.completedFuture(null);
      }
      return client
          .tryAcquire(prefix() + free.get(i), options)
          .thenCompose(
              (AcquireResult r) -> {
                if (r instanceof Granted g) {
                  if (!result.complete(g.lease())) {
                    g.lease().release(); // the caller stopped waiting
                  }
                  return CompletableFuture.completedFuture(null);
                }
                if (r instanceof Rejected rejected) {
                  if (rejected.rejection().reason() != RejectReason.LOCK_DELAY) {
                    throw new AcquireRejectedException(
                        prefix() + free.get(i), rejected.rejection());
                  }
                  return tryEach(free, i + 1, true, revision);
                }
                return tryEach(free, i + 1, lockDelayed, revision);
              });
    }

    private void waitForAnEndAfter(long revision) {
      synchronized (this) {
        if (lastEnd <= revision) {
          waitingAfter = revision;
          return;
        }
      }
      round();
    }

    @Override
    public void onEvent(WatchEvent event) {
      if (!event.endsLease() || slotOf(event.name()) < 0) {
        return;
      }
      synchronized (this) {
        lastEnd = Math.max(lastEnd, event.revision());
        if (waitingAfter < 0 || event.revision() <= waitingAfter) {
          return;
        }
        waitingAfter = -1;
      }
      round();
    }

    private void closeWatch() {
      Watch w;
      synchronized (this) {
        w = watch;
        watch = null;
      }
      if (w != null) {
        w.close();
      }
    }
  }
}
