package io.leasehold.client.internal;

import io.leasehold.client.AcquireRejectedException;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.AcquireTimeoutException;
import io.leasehold.client.ClientClosedException;
import io.leasehold.client.ClusterUnavailableException;
import io.leasehold.client.Conflict;
import io.leasehold.client.ConnectionFailedException;
import io.leasehold.client.Granted;
import io.leasehold.client.LeaseLostException;
import io.leasehold.client.LeaseholdException;
import io.leasehold.client.RejectReason;
import io.leasehold.client.Rejected;
import io.leasehold.client.Rejection;
import io.leasehold.client.WatchEvent;
import io.leasehold.client.WatchListener;
import io.leasehold.client.WatchOptions;
import io.leasehold.client.WatchView;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The acquisitions of one name in this client, served one at a time in arrival order.
 *
 * <p>All of a client's leases share its holder identity, and the cluster grants the same lease
 * again to the same holder, so two handles of one client must never ask for a name at once: only
 * the queue's head sends an Acquire, and only while no handle of this client holds the name. A head
 * that meets another holder waits for a watch (from the conflict's revision + 1) to report the
 * lease's end, then asks again — no polling. Each of the head's Acquires also asks its node to
 * queue it while the name is held ({@link Waiter#nodeWait()}): a node that does answers in order of
 * arrival when the lease ends, and a CONFLICT then means only that the node's wait was over, so the
 * head asks again at once; the watch serves nodes that answer at once. A lock-delay (the name is
 * free but its last lease expired or was revoked moments ago) is waited out by a timer, since no
 * event marks its end. Tries jump the queue and never wait for a holder; they wait only while this
 * client gives back a lease granted to a waiter that had gone, so as not to answer CONFLICT with
 * it.
 *
 * <p>A handle whose release the cluster did not confirm may still be held there; if the cluster
 * then grants the same token again, it is released and asked for again, so no two handles of this
 * client ever carry the same token.
 */
final class NameSlot implements LeaseHandle.Owner {
  private final ClientCore core;
  private final String name;
  private final NameSlots owner;

  // Guarded by this.
  // Sized for the usual one waiter: a slot lives as long as its lease.
  private final ArrayDeque<Waiter> queue = new ArrayDeque<>(1);
  private LeaseHandle held;

  /**
   * {@link #held} was granted to a waiter that had gone (cancelled, or its thread interrupted) and
   * is being given back. A try meanwhile waits for that to finish rather than answer CONFLICT with
   * this client's own lease, which nobody holds any more.
   */
  private boolean givingBack;

  private boolean attempting;

  /** The waiter whose attempt is out, while {@link #attempting}. */
  private Waiter sending;

  private boolean awaitingChange;
  private long conflictRevision;
  private ResumingWatch watch;
  private long endedToken;
  private boolean unconfirmedEnd;
  private boolean retired;
  private ScheduledFuture<?> retry;

  NameSlot(ClientCore core, String name, NameSlots owner) {
    this.core = core;
    this.name = name;
    this.owner = owner;
  }

  String name() {
    return name;
  }

  synchronized boolean add(Waiter w) {
    if (retired) {
      return false;
    }
    if (w.tryOnly()) {
      queue.addFirst(w);
    } else {
      queue.addLast(w);
      w.waitUpTo.ifPresent(wait -> w.timeout = core.schedule(() -> timedOut(w), wait.toNanos()));
    }
    // Whatever ends a waiter (grant, timeout, cancellation), the queue may move.
    w.result.whenComplete(
        (r, e) -> {
          ScheduledFuture<?> t = w.timeout;
          if (t != null) {
            t.cancel(false);
          }
          core.internal().execute(this::pump);
        });
    return true;
  }

  private void timedOut(Waiter w) {
    Conflict last;
    synchronized (this) {
      if (attempting && sending == w) {
        return; // its attempt is out: a grant still counts, a conflict ends it (see conflicted)
      }
      last = w.lastConflict;
    }
    w.result.completeExceptionally(
        new AcquireTimeoutException(
            name, w.waitUpTo.orElse(Duration.ZERO), Optional.ofNullable(last)));
  }

  /**
   * Under the lock: no attempt is out; the slot lets go of the waiter (and the request it holds).
   */
  private void attemptDone() {
    attempting = false;
    sending = null;
  }

  /**
   * Lets the queue move: answers tries, drops finished waiters, sends the head's attempt, or
   * retires the slot.
   */
  void pump() {
    List<Runnable> after = new ArrayList<>();
    Waiter send = null;
    synchronized (this) {
      if (retired) {
        return;
      }
      if (core.isClosing()) {
        failAllLocked(new ClientClosedException(name + ": the client is closed"), after);
      } else {
        if (held != null && !givingBack) {
          Conflict local = new Conflict(held.holder(), held.token(), held.peekRemaining());
          for (Iterator<Waiter> it = queue.iterator(); it.hasNext(); ) {
            Waiter w = it.next();
            if (w.tryOnly()) {
              it.remove();
              after.add(() -> w.result.complete(local));
            }
          }
        }
        queue.removeIf(w -> w.result.isDone());
        if (held == null && !attempting && retry == null) {
          Waiter head = queue.peekFirst();
          if (head == null) {
            if (!unconfirmedEnd) {
              retireLocked(after);
            }
          } else if (head.tryOnly() || !awaitingChange) {
            attempting = true;
            sending = head;
            send = head;
          }
        }
      }
    }
    after.forEach(Runnable::run);
    if (send != null) {
      send(send);
    }
  }

  private void send(Waiter w) {
    CompletableFuture<Calls.Sent<Grant>> f;
    try {
      Duration wait = w.nodeWait();
      w.nodeWait = wait;
      w.nodeWaitSentNanos = System.nanoTime();
      f = w.attempt.apply(wait);
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    f.whenComplete(
        (sent, error) -> {
          if (error != null) {
            failedAttempt(w, Futures.unwrap(error));
            return;
          }
          Grant g = sent.value();
          switch (g.outcome()) {
            case GRANTED -> granted(w, g, sent.sentNanos());
            case CONFLICT -> conflicted(w, g);
            case REJECTED -> rejected(w, g);
            case SKIPPED -> finish(w, new SkippedAcquisition(name));
            default ->
                finish(w, new LeaseholdException(name + ": unexpected outcome " + g.outcome()));
          }
        });
  }

  private void rejected(Waiter w, Grant g) {
    if (g.rejection().isEmpty()) {
      finish(w, new LeaseholdException(name + ": rejected without a reason"));
      return;
    }
    Rejection r = g.rejection().get();
    if (!w.tryOnly() && r.reason() == RejectReason.LOCK_DELAY) {
      synchronized (this) {
        if (!w.result.isDone() && !w.pastDeadline() && !core.isClosing()) {
          // The name is free, but its last lease expired or was revoked a moment ago: no event
          // marks the delay's end, so a waiter asks again when it should be over. retry_after is
          // the leader's estimate (it may say 0 while the bar still holds, until the leader lifts
          // it), so asking again backs off too; spread a little, so the waiters of several
          // clients do not all ask at once.
          attemptDone();
          w.lockDelayRetries++;
          long estimate = r.retryAfter().map(Duration::toNanos).orElse(0L);
          long backoff =
              w.lockDelayRetries == 1
                  ? 0
                  : core.settings().retry().backoff(w.lockDelayRetries - 1, 0.5).toNanos();
          long delay =
              Math.max(estimate, backoff)
                  + TimeUnit.MILLISECONDS.toNanos(5)
                  + (long)
                      (ThreadLocalRandom.current().nextDouble()
                          * Math.max(estimate / 10, TimeUnit.MILLISECONDS.toNanos(20)));
          retry = core.schedule(this::retryNow, delay);
          return;
        }
      }
    }
    if (!w.tryOnly() && r.reason() == RejectReason.LOCK_DELAY && w.pastDeadline()) {
      // A node that queued the call answers the lock-delay it waited in once the wait is over.
      finish(
          w,
          new AcquireTimeoutException(
              name, w.waitUpTo.orElse(Duration.ZERO), Optional.ofNullable(w.lastConflict)));
      return;
    }
    finish(w, w.tryOnly() ? new Rejected(r) : new AcquireRejectedException(name, r));
  }

  private void failedAttempt(Waiter w, Throwable cause) {
    synchronized (this) {
      attemptDone();
      // A connection no retry mends (TLS settings that do not match the nodes') ends the wait too.
      boolean mayPass = !(cause instanceof ConnectionFailedException f) || f.reason().mayPass();
      if (cause instanceof ClusterUnavailableException
          && mayPass
          && w.mode == Waiter.Mode.WAIT
          && !w.result.isDone()
          && !w.pastDeadline()
          && !core.isClosing()) {
        // A waiting acquisition outlives outages: try again after a backoff.
        w.transientFailures++;
        long delay =
            core.settings()
                .retry()
                .backoff(w.transientFailures, ThreadLocalRandom.current().nextDouble())
                .toNanos();
        retry = core.schedule(this::retryNow, delay);
        return;
      }
    }
    finish(w, cause);
  }

  private void retryNow() {
    synchronized (this) {
      retry = null;
    }
    pump();
  }

  /**
   * Ends a waiter with a result (an AcquireResult) or a failure (a Throwable) and moves the queue.
   */
  private void finish(Waiter w, Object outcome) {
    synchronized (this) {
      attemptDone();
      queue.remove(w);
    }
    if (outcome instanceof AcquireResult r) {
      w.result.complete(r);
    } else {
      w.result.completeExceptionally((Throwable) outcome);
    }
    pump();
  }

  private void granted(Waiter w, Grant g, long sentNanos) {
    boolean reused;
    synchronized (this) {
      reused = g.token() <= endedToken;
    }
    if (reused) {
      // The cluster kept an earlier handle's lease (its release never arrived) and granted it
      // again to this holder: release it and ask again, for a token no earlier handle had.
      core.sendRelease(name, g.token())
          .whenComplete(
              (v, e) -> {
                if (e != null) {
                  failedAttempt(w, Futures.unwrap(e));
                } else {
                  synchronized (this) {
                    attemptDone();
                  }
                  pump();
                }
              });
      return;
    }
    // A lease in a session lives as long as the session: a keep-alive of it sent later than this
    // request (while the grant waited in a long queue, e.g. an acquireAll of thousands) gives it
    // its TTL from then. The grant renewed the session too.
    long validFrom = sentNanos;
    if (g.session() != 0) {
      core.session().renewed(g.session(), sentNanos);
      validFrom = core.session().renewedSent(g.session()).orElse(sentNanos);
    }
    LeaseHandle lease = new LeaseHandle(core, name, g, validFrom, this);
    ResumingWatch toClose;
    synchronized (this) {
      attemptDone();
      held = lease;
      // Known gone already (the usual case: it went while the request was out): a try from now
      // on waits for the give-back below. One that goes in the moments until then is marked there.
      givingBack = w.result.isDone();
      awaitingChange = false;
      unconfirmedEnd = false;
      toClose = watch;
      watch = null;
    }
    if (toClose != null) {
      toClose.close();
    }
    lease.start();
    if (lease.isFinal()) {
      // The answer came after the TTL had run out on this client's clock: the lease is being
      // released. A waiter stays at the head and asks again once it is; a try fails.
      if (w.tryOnly()) {
        finish(
            w,
            new LeaseLostException(
                name
                    + ": granted (token "
                    + lease.token()
                    + "), but the answer came after its TTL ran out"));
      }
      return;
    }
    synchronized (this) {
      queue.remove(w);
    }
    if (!w.result.complete(new Granted(lease))) {
      // Nobody wants it any more (timed out or cancelled while the request was out): give it back.
      synchronized (this) {
        givingBack = held == lease;
      }
      lease.releaseQuietly();
    }
    pump();
  }

  private void conflicted(Waiter w, Grant g) {
    Conflict c = g.conflict().orElseGet(() -> new Conflict("", 0, Duration.ZERO));
    if (w.tryOnly()) {
      finish(w, c);
      return;
    }
    ResumingWatch open = null;
    boolean timedOut;
    synchronized (this) {
      w.lastConflict = c;
      timedOut = w.pastDeadline();
      if (!timedOut && w.nodeWaited()) {
        // The node kept the call queued for all the wait it was asked: ask again at once, which
        // queues it there again (behind whoever came meanwhile) rather than watching.
        attemptDone();
      } else if (!timedOut) {
        attemptDone();
        awaitingChange = true;
        conflictRevision = Math.max(conflictRevision, g.revision());
        if (watch == null) {
          watch =
              open =
                  core.internalWatch(
                      WatchOptions.of(name)
                          .withFromRevision(g.revision() + 1, g.group())
                          .withView(WatchView.BASIC),
                      new EndingListener());
        }
      }
    }
    if (timedOut) {
      finish(
          w, new AcquireTimeoutException(name, w.waitUpTo.orElse(Duration.ZERO), Optional.of(c)));
      return;
    }
    if (open != null) {
      open.start();
    }
    pump();
  }

  /** Wakes the queue when the lease that held the name ends. */
  private final class EndingListener implements WatchListener {
    @Override
    public void onEvent(WatchEvent e) {
      if (!e.name().equals(name) || !e.endsLease()) {
        return;
      }
      boolean go;
      synchronized (NameSlot.this) {
        go = awaitingChange && e.revision() > conflictRevision;
        if (go) {
          awaitingChange = false;
        }
      }
      if (go) {
        pump();
      }
    }

    @Override
    public void onError(LeaseholdException error) {
      // The watch cannot go on (e.g. its history was compacted): ask again, which watches anew.
      synchronized (NameSlot.this) {
        watch = null;
        awaitingChange = false;
      }
      pump();
    }
  }

  /**
   * A handle of this name ended; {@code confirmed}: the cluster is known not to hold its lease any
   * more.
   */
  @Override
  public void ended(LeaseHandle lease, boolean confirmed) {
    synchronized (this) {
      if (held == lease) {
        held = null;
        givingBack = false;
        endedToken = Math.max(endedToken, lease.token());
        unconfirmedEnd = unconfirmedEnd || !confirmed;
      }
    }
    pump();
  }

  /** The client is closing: every waiter fails. */
  void close() {
    List<Runnable> after = new ArrayList<>();
    synchronized (this) {
      failAllLocked(new ClientClosedException(name + ": the client is closed"), after);
    }
    after.forEach(Runnable::run);
  }

  private void failAllLocked(RuntimeException error, List<Runnable> after) {
    List<Waiter> all = new ArrayList<>(queue);
    queue.clear();
    all.forEach(w -> after.add(() -> w.result.completeExceptionally(error)));
    if (retry != null) {
      retry.cancel(false);
      retry = null;
    }
    retireLocked(after);
  }

  private void retireLocked(List<Runnable> after) {
    retired = true;
    owner.retire(this);
    ResumingWatch w = watch;
    watch = null;
    if (w != null) {
      after.add(w::close);
    }
  }
}
