package io.leasehold.client.internal;

import io.leasehold.client.AcquireRejectedException;
import io.leasehold.client.AttributeUpdate;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseAttributes;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseListener;
import io.leasehold.client.LeaseLostException;
import io.leasehold.client.LeaseState;
import io.leasehold.client.LeaseTransition;
import io.leasehold.client.LossReason;
import io.leasehold.client.Rejection;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.TransferRequest;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A held lease and its validity on this client's monotonic clock.
 *
 * <p>The deadline is the send time of the last successful renewal (or of the grant) + TTL − the
 * drift margin. The cluster applied that renewal after it was sent and counts the TTL from then on
 * its own clock, so the local deadline is never later than the cluster's. JEOPARDY starts when a
 * renewal is overdue by one full interval; LOST at the deadline, or when the cluster answers
 * NOT_HELD. The client's one check timer ({@link KeepAlive#checkBy}) moves the state; {@link
 * #state()} and {@link #isValid()} also read the clock themselves, so a late timer never makes an
 * expired lease look valid.
 *
 * <p>A process may hold a million of these: a handle keeps no timer, listener list or future of its
 * own until a listener or {@link #ended()} asks for them.
 */
public final class LeaseHandle implements Lease {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseHandle.class);
  private static final long MIN_HEARTBEAT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** Told once when a handle is finished with the cluster. */
  interface Owner {
    /**
     * The handle is released, or lost and its release attempted, so the next local waiter may go;
     * {@code confirmed}: the cluster is known not to hold the lease any more.
     */
    void ended(LeaseHandle lease, boolean confirmed);
  }

  private final ClientCore core;
  private final String name;
  private final String holder;
  private final long token;

  /** The session the lease lives with, renewed by its keep-alive; 0: renewed on its own. */
  private final long session;

  private final Owner owner;
  private volatile LeaseAttributes attributes;

  /** Made by the first listener or {@link #ended()}; null while nobody listens. */
  private volatile LeaseListeners listeners;

  // Guarded by this.
  private LeaseState state = LeaseState.HELD;
  private LossReason lossReason;
  private LeaseTransition finalTransition;
  private long ttlNanos;
  private long heartbeatNanos;
  private long lastSentNanos;
  private long lastAskedNanos;
  private long deadlineNanos;
  private boolean releaseCalled;
  private boolean releasedOnClose;
  private boolean endHandled;
  private Rejection refusal;

  /**
   * @param sentNanos when the request that granted the lease was sent
   * @param owner told once when the handle is finished with the cluster
   */
  LeaseHandle(ClientCore core, String name, Grant grant, long sentNanos, Owner owner) {
    this.core = core;
    this.name = name;
    // The client's own holder string, not a copy per lease parsed from each answer.
    this.holder =
        grant.holder().equals(core.settings().holder()) ? core.settings().holder() : grant.holder();
    this.token = grant.token();
    this.session = grant.session();
    this.attributes = grant.attributes();
    this.owner = owner;
    this.ttlNanos = grant.ttl().toNanos();
    long suggested =
        grant.heartbeat().map(Duration::toNanos).filter(h -> h > 0).orElse(ttlNanos / 3);
    this.heartbeatNanos = Math.max(MIN_HEARTBEAT_NANOS, Math.min(suggested, ttlNanos / 2));
    this.lastSentNanos = sentNanos;
    this.lastAskedNanos = sentNanos;
    this.deadlineNanos = sentNanos + ttlNanos - marginNanos();
  }

  /** The drift margin for the current TTL. */
  private long marginNanos() {
    return core.settings().driftMarginNanos(ttlNanos);
  }

  /** Starts the renewals and the checks. */
  void start() {
    // Added first: if the grant's answer came so late that the lease is already lost, check() takes
    // it out again.
    core.keepAlive().add(this);
    check();
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String holder() {
    return holder;
  }

  @Override
  public long token() {
    return token;
  }

  @Override
  public long session() {
    return session;
  }

  @Override
  public synchronized Duration ttl() {
    return Duration.ofNanos(ttlNanos);
  }

  @Override
  public LeaseAttributes attributes() {
    return attributes;
  }

  @Override
  public LeaseState state() {
    check();
    synchronized (this) {
      return state;
    }
  }

  @Override
  public boolean isValid() {
    LeaseState s = state();
    synchronized (this) {
      return !s.isFinal() && System.nanoTime() - deadlineNanos < 0;
    }
  }

  @Override
  public Duration remaining() {
    LeaseState s = state();
    synchronized (this) {
      return s.isFinal()
          ? Duration.ZERO
          : Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
    }
  }

  /** Time to the local deadline, without moving the state (safe to call under other locks). */
  synchronized Duration peekRemaining() {
    return state.isFinal()
        ? Duration.ZERO
        : Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
  }

  @Override
  public synchronized Optional<LossReason> lossReason() {
    return Optional.ofNullable(lossReason);
  }

  @Override
  public synchronized Optional<Rejection> renewalRejection() {
    return Optional.ofNullable(refusal);
  }

  synchronized boolean isFinal() {
    return state.isFinal();
  }

  /**
   * When the next renewal is due: one heartbeat after the last successful one was sent, and never
   * sooner than half a heartbeat after the last time it was asked for (so a lease whose renewal the
   * policy refuses is asked again at that pace, not in a tight loop).
   */
  synchronized long nextDueNanos() {
    long afterSuccess = lastSentNanos + heartbeatNanos;
    long afterAsking = lastAskedNanos + heartbeatNanos / 2;
    return afterAsking - afterSuccess > 0 ? afterAsking : afterSuccess;
  }

  /** The keep-alive loop included this lease in a Renew sent at {@code sentNanos}. */
  synchronized void asked(long sentNanos) {
    if (sentNanos - lastAskedNanos > 0) {
      lastAskedNanos = sentNanos;
    }
  }

  synchronized long heartbeatNanos() {
    return heartbeatNanos;
  }

  /**
   * A renewal sent at {@code sentNanos} succeeded, with the TTL and heartbeat interval the policy
   * in force gave it.
   */
  void renewed(long sentNanos, Optional<Duration> ttl, Optional<Duration> heartbeat) {
    boolean releaseAgain;
    synchronized (this) {
      releaseAgain = state == LeaseState.LOST && lossReason == LossReason.DEADLINE_PASSED;
      if (!state.isFinal()) {
        refusal = null;
        ttl.map(Duration::toNanos)
            .filter(t -> t > 0 && t != ttlNanos)
            .ifPresent(
                t -> {
                  ttlNanos = t;
                  heartbeatNanos = Math.max(MIN_HEARTBEAT_NANOS, Math.min(heartbeatNanos, t / 3));
                });
        heartbeat
            .map(Duration::toNanos)
            .filter(h -> h > 0)
            .ifPresent(
                h -> heartbeatNanos = Math.max(MIN_HEARTBEAT_NANOS, Math.min(h, ttlNanos / 2)));
        if (sentNanos - lastSentNanos > 0) {
          lastSentNanos = sentNanos;
          deadlineNanos = Math.max(deadlineNanos, sentNanos + ttlNanos - marginNanos());
        }
      }
    }
    if (releaseAgain) {
      // The cluster renewed it after this client gave it up: let the name go now rather than after
      // a TTL.
      sendRelease();
    }
    check();
  }

  /**
   * The cluster's policy refused to renew the lease: it is in jeopardy until a renewal succeeds.
   */
  void renewalRefused(Rejection rejection) {
    boolean changed;
    synchronized (this) {
      changed = !state.isFinal() && refusal == null;
      if (!state.isFinal()) {
        refusal = rejection;
      }
    }
    if (changed) {
      LOG.info(
          "lease {} (token {}): renewal refused ({}): {}",
          name,
          token,
          rejection.reason(),
          rejection.message());
    }
    check();
  }

  /** The cluster answered NOT_HELD for this lease's token. */
  void notHeld() {
    LeaseTransition t;
    synchronized (this) {
      t = state.isFinal() ? null : lose(LossReason.NOT_HELD);
    }
    after(t);
  }

  /** The client is closing without releasing. */
  void abandon() {
    LeaseTransition t;
    synchronized (this) {
      t = state.isFinal() ? null : lose(LossReason.CLIENT_CLOSED);
    }
    after(t);
  }

  /** Moves the state by the clock, and has the client's check timer fire by its next move. */
  void check() {
    LeaseTransition t;
    boolean live;
    long next;
    synchronized (this) {
      t = evaluate(System.nanoTime());
      live = !state.isFinal();
      next = state == LeaseState.HELD ? jeopardyAtNanos() : deadlineNanos;
    }
    if (live) {
      // Outside the lock: the keep-alive loop reads leases under its own.
      core.keepAlive().checkBy(next);
    }
    after(t);
  }

  /** When a renewal is overdue by a full interval. */
  private long jeopardyAtNanos() {
    return lastSentNanos + Math.min(2 * heartbeatNanos, (ttlNanos - marginNanos()) * 2 / 3);
  }

  private LeaseTransition evaluate(long now) {
    if (state.isFinal()) {
      return null;
    }
    if (now - deadlineNanos >= 0) {
      return lose(LossReason.DEADLINE_PASSED);
    }
    // In jeopardy when a renewal is overdue by a full interval, or the policy refuses renewals.
    boolean doubtful = now - jeopardyAtNanos() >= 0 || refusal != null;
    LeaseTransition t = null;
    if (state == LeaseState.HELD && doubtful) {
      t = move(LeaseState.JEOPARDY, null);
    } else if (state == LeaseState.JEOPARDY && !doubtful) {
      t = move(LeaseState.HELD, null);
    }
    return t;
  }

  private LeaseTransition lose(LossReason reason) {
    lossReason = reason;
    return move(LeaseState.LOST, reason);
  }

  /**
   * Under the lock. Returns the transition, or null for one nobody listens to and that ends
   * nothing.
   */
  private LeaseTransition move(LeaseState to, LossReason reason) {
    LeaseListeners ls = listeners;
    LeaseTransition t =
        ls != null || to.isFinal()
            ? new LeaseTransition(this, state, to, Optional.ofNullable(reason))
            : null;
    state = to;
    if (to.isFinal()) {
      finalTransition = t;
    }
    if (ls != null) {
      // Queued under the lock, so transitions are delivered in the order they happened; run by
      // after().
      ls.queue(t);
    }
    return t;
  }

  /**
   * The listeners, made on first use (under the lock), told of the final transition if there was
   * one.
   */
  private LeaseListeners listenersLocked() {
    LeaseListeners ls = listeners;
    if (ls == null) {
      ls = new LeaseListeners(core.callbackExecutor());
      if (finalTransition != null) {
        ls.queue(finalTransition);
      }
      listeners = ls;
    }
    return ls;
  }

  private void flushListeners() {
    LeaseListeners ls = listeners;
    if (ls != null) {
      ls.flush();
    }
  }

  /** What follows a transition, outside the lock. */
  private void after(LeaseTransition t) {
    flushListeners();
    if (t == null || t.to() != LeaseState.LOST) {
      return;
    }
    core.keepAlive().remove(this);
    // Off the keep-alive lane: a session's end loses all its leases in one answer, and their log
    // lines, releases and waiting acquisitions must not hold up the next round of every client.
    core.offLane(() -> lost(t));
  }

  private void lost(LeaseTransition t) {
    LOG.info("lease {} (token {}) lost: {}", name, token, lossReason().map(Enum::name).orElse("?"));
    if (t.reason().orElse(null) == LossReason.DEADLINE_PASSED) {
      // The cluster may still hold it (the renewal may have arrived and only its answer not):
      // release it before the next local waiter asks, so that waiter gets a fresh token.
      sendRelease().whenComplete((v, e) -> endOnce(e == null));
    } else {
      endOnce(true);
    }
  }

  private void endOnce(boolean confirmed) {
    synchronized (this) {
      if (endHandled) {
        return;
      }
      endHandled = true;
    }
    owner.ended(this, confirmed);
  }

  private CompletableFuture<Void> sendRelease() {
    ReleaseRequest request = ReleaseRequest.newBuilder().setName(name).setToken(token).build();
    // RELEASED, or NOT_HELD (already gone, or a retry of a release that was applied): either way it
    // is free of us.
    return core.calls()
        .call(Calls.Target.WRITE, LeasesGrpc.getReleaseMethod(), request, "Release " + name)
        .thenApply(r -> null);
  }

  @Override
  public CompletableFuture<Void> release() {
    boolean wasLost;
    synchronized (this) {
      if (releaseCalled) {
        throw new IllegalStateException(
            "lease "
                + name
                + " (token "
                + token
                + ") was already released"
                + (releasedOnClose ? " (by the client's close)" : ""));
      }
      releaseCalled = true;
      wasLost = state == LeaseState.LOST;
      stopHolding();
    }
    stoppedHolding();
    if (wasLost) {
      return core.onCallbacks(CompletableFuture.completedFuture(null));
    }
    CompletableFuture<Void> sent = sendRelease();
    sent.whenComplete((v, e) -> endOnce(e == null));
    return core.onCallbacks(sent);
  }

  /**
   * Release for the client's close of a lease attached to the session the close ends: the handle is
   * RELEASED now, and the name is the cluster's again once {@code sessionClosed} completes (no
   * Release of its own).
   */
  void releaseWithSession(CompletableFuture<Void> sessionClosed) {
    synchronized (this) {
      if (releaseCalled) {
        return;
      }
      releaseCalled = true;
      releasedOnClose = true;
      stopHolding();
    }
    stoppedHolding();
    sessionClosed.whenComplete((v, e) -> endOnce(e == null));
  }

  /** Under the lock, for a release: RELEASED (unless already final). */
  private void stopHolding() {
    if (!state.isFinal()) {
      move(LeaseState.RELEASED, null);
    }
  }

  /** After the lock, for a release: the listeners hear it and the keep-alive loop lets go. */
  private void stoppedHolding() {
    flushListeners();
    core.keepAlive().remove(this);
  }

  /** Release for the client's close: nothing is delivered to the caller. */
  CompletableFuture<Void> releaseQuietly() {
    synchronized (this) {
      releasedOnClose = !releaseCalled;
    }
    try {
      return release().exceptionally(e -> null);
    } catch (IllegalStateException alreadyReleased) {
      return CompletableFuture.completedFuture(null);
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      if (releaseCalled || state.isFinal()) {
        return;
      }
    }
    try {
      release().get(core.settings().requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (IllegalStateException raced) {
      // released by another thread meanwhile
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn(
          "lease {} (token {}): release not confirmed by the cluster ({}); it expires after its TTL",
          name,
          token,
          e.toString());
    }
  }

  @Override
  public CompletableFuture<LeaseAttributes> update(AttributeUpdate update) {
    synchronized (this) {
      if (state == LeaseState.RELEASED) {
        throw new IllegalStateException("lease " + name + " (token " + token + ") was released");
      }
      if (state == LeaseState.LOST) {
        return CompletableFuture.failedFuture(lostException());
      }
    }
    CompletableFuture<LeaseAttributes> f =
        core.calls()
            .call(
                Calls.Target.WRITE,
                LeasesGrpc.getUpdateMethod(),
                Protos.update(name, token, update),
                "Update " + name)
            .thenApply(
                r -> {
                  if (r.getOutcome() == Outcome.UPDATED) {
                    LeaseAttributes now = Protos.attributes(r.getLease().getAttributes());
                    attributes = now;
                    return now;
                  }
                  notHeld();
                  throw lostException();
                });
    return core.onCallbacks(f);
  }

  @Override
  public CompletableFuture<LeaseInfo> transferTo(String toHolder) {
    Objects.requireNonNull(toHolder, "toHolder");
    synchronized (this) {
      if (state == LeaseState.RELEASED) {
        throw new IllegalStateException("lease " + name + " (token " + token + ") was released");
      }
      if (state == LeaseState.LOST) {
        return CompletableFuture.failedFuture(lostException());
      }
    }
    TransferRequest request =
        TransferRequest.newBuilder().setName(name).setToken(token).setToHolder(toHolder).build();
    CompletableFuture<LeaseInfo> f =
        core.calls()
            .call(Calls.Target.WRITE, LeasesGrpc.getTransferMethod(), request, "Transfer " + name)
            .thenApply(
                r -> {
                  switch (r.getOutcome()) {
                    case TRANSFERRED -> {
                      transferred();
                      return Protos.lease(r.getLease());
                    }
                    case REJECTED ->
                        throw new AcquireRejectedException(
                            name, Protos.rejection(r.getRejection()));
                    default -> {
                      notHeld();
                      throw lostException();
                    }
                  }
                });
    return core.onCallbacks(f);
  }

  @Override
  public CompletableFuture<Long> offerTo(String toHolder, Duration acceptWithin) {
    Objects.requireNonNull(toHolder, "toHolder");
    Objects.requireNonNull(acceptWithin, "acceptWithin");
    synchronized (this) {
      if (state == LeaseState.RELEASED) {
        throw new IllegalStateException("lease " + name + " (token " + token + ") was released");
      }
      if (state == LeaseState.LOST) {
        return CompletableFuture.failedFuture(lostException());
      }
    }
    TransferRequest request =
        TransferRequest.newBuilder()
            .setName(name)
            .setToken(token)
            .setToHolder(toHolder)
            .setAcceptWithin(Protos.duration(acceptWithin))
            .build();
    CompletableFuture<Long> f =
        core.calls()
            .call(Calls.Target.WRITE, LeasesGrpc.getTransferMethod(), request, "Offer " + name)
            .thenApply(
                r ->
                    switch (r.getOutcome()) {
                      case OFFERED -> r.getOffer();
                      case REJECTED ->
                          throw new AcquireRejectedException(
                              name, Protos.rejection(r.getRejection()));
                      default -> {
                        notHeld();
                        throw lostException();
                      }
                    });
    return core.onCallbacks(f);
  }

  /** This client handed the lease over: it is no longer this handle's to renew or act on. */
  private void transferred() {
    LeaseTransition t;
    synchronized (this) {
      t = state.isFinal() ? null : lose(LossReason.TRANSFERRED);
    }
    after(t);
  }

  private LeaseLostException lostException() {
    return new LeaseLostException(
        "lease "
            + name
            + " (token "
            + token
            + ") is no longer held"
            + lossReason().map(r -> " (" + r + ")").orElse(""));
  }

  @Override
  public void addListener(LeaseListener listener) {
    Objects.requireNonNull(listener, "listener");
    LeaseListeners ls;
    synchronized (this) {
      ls = listenersLocked();
    }
    ls.add(listener);
  }

  @Override
  public boolean removeListener(LeaseListener listener) {
    LeaseListeners ls = listeners;
    return ls != null && ls.remove(listener);
  }

  @Override
  public CompletableFuture<LeaseTransition> ended() {
    LeaseListeners ls;
    synchronized (this) {
      ls = listenersLocked();
    }
    ls.flush();
    return ls.ended();
  }

  @Override
  public String toString() {
    return "Lease[" + name + ", token " + token + ", " + state() + "]";
  }
}
