package io.leasehold.client.internal;

import io.leasehold.proto.v1.KeepAliveRequest;
import io.leasehold.proto.v1.KeepAliveResponse;
import io.leasehold.proto.v1.KeepAliveResult;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.RenewResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's one keep-alive loop: every round renews, in one Renew call, every held lease that is
 * due before the next round (the round interval is the shortest heartbeat among them), so a client
 * with a thousand leases of one TTL sends one call per heartbeat, not a thousand. A round that
 * fails is retried after a short jittered backoff, on another node if the node was the problem;
 * leases whose renewal stays overdue go to JEOPARDY and, at their deadline, LOST.
 *
 * <p>Leases attached to a session are not renewed item by item: the round keeps their session alive
 * (one KeepAlive item per session, in one call), and its answer renews, or loses, every lease
 * attached to it, so JEOPARDY and LOST reach all of them together.
 *
 * <p>Rounds run, and their answers are applied, on the shared timer (the keep-alive lane), never
 * behind other work such as another client's close. One timer per client, not one per lease, moves
 * the leases to JEOPARDY and LOST: leases renewed together fall due together.
 */
public final class KeepAlive {
  private static final Logger LOG = LoggerFactory.getLogger(KeepAlive.class);

  /** The server's bound on items per Renew. */
  static final int MAX_ITEMS = 10_000;

  private static final long MIN_ATTEMPT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final ClientCore core;
  private final Set<LeaseHandle> leases = ConcurrentHashMap.newKeySet();

  /** Per session, how many of its attached leases had ended when it was last kept alive. */
  private final Map<Long, Long> sessionEndings = new ConcurrentHashMap<>();

  /**
   * When the check timer fires; {@code Long.MAX_VALUE} with none armed. Read without the lock by
   * {@link #checkBy}.
   */
  private volatile long checkAt = Long.MAX_VALUE;

  // Guarded by this.
  private ScheduledFuture<?> wakeUp;
  private long wakeUpAt;
  private ScheduledFuture<?> checkTimer;
  private boolean inFlight;
  private int failures;
  private boolean stopped;

  KeepAlive(ClientCore core) {
    this.core = core;
  }

  void add(LeaseHandle lease) {
    leases.add(lease);
    wakeAt(lease.nextDueNanos());
  }

  /**
   * A keep-alive of session {@code id} sent at {@code sentNanos} was answered RENEWED outside the
   * loop (by an acquireAll batch that waited for its answer): the leases attached to it that were
   * granted meanwhile count from then too.
   */
  void sessionRenewed(long id, long sentNanos) {
    core.session().renewed(id, sentNanos);
    for (LeaseHandle l : leases) {
      if (l.session() == id && !l.isFinal()) {
        l.renewed(sentNanos, Optional.empty(), Optional.empty());
      }
    }
  }

  void remove(LeaseHandle lease) {
    leases.remove(lease);
  }

  /** The leases being kept alive. */
  List<LeaseHandle> leases() {
    return List.copyOf(leases);
  }

  synchronized void stop() {
    stopped = true;
    if (wakeUp != null) {
      wakeUp.cancel(false);
    }
    if (checkTimer != null) {
      checkTimer.cancel(false);
      checkTimer = null;
    }
    checkAt = Long.MAX_VALUE;
  }

  /**
   * A lease's state moves at {@code at} (System.nanoTime) unless it is renewed first: the check
   * timer fires by then. A timer armed for later is moved sooner; one armed sooner stays, and when
   * it fires every lease says when it next needs one.
   */
  void checkBy(long at) {
    long armed = checkAt;
    if (armed != Long.MAX_VALUE && armed - at <= 0) {
      return; // the common case, on every isValid(): no lock
    }
    synchronized (this) {
      if (stopped || (checkAt != Long.MAX_VALUE && checkAt - at <= 0)) {
        return;
      }
      if (checkTimer != null) {
        checkTimer.cancel(false);
      }
      checkAt = at;
      checkTimer = core.schedule(this::checkAll, at - System.nanoTime());
    }
  }

  private void checkAll() {
    synchronized (this) {
      checkTimer = null;
      checkAt = Long.MAX_VALUE;
      if (stopped) {
        return;
      }
    }
    for (LeaseHandle l : leases) {
      l.check();
    }
  }

  private synchronized void wakeAt(long at) {
    if (stopped || inFlight) {
      return; // a running round schedules the next one when it ends
    }
    if (wakeUp != null && !wakeUp.isDone() && wakeUpAt - at <= 0) {
      return;
    }
    if (wakeUp != null) {
      wakeUp.cancel(false);
    }
    wakeUpAt = at;
    wakeUp = core.schedule(this::round, at - System.nanoTime());
  }

  private void round() {
    List<LeaseHandle> due = new ArrayList<>();
    long window;
    synchronized (this) {
      wakeUp = null;
      if (stopped || inFlight) {
        return;
      }
      window = Long.MAX_VALUE;
      for (LeaseHandle l : leases) {
        window = Math.min(window, l.heartbeatNanos());
      }
      if (window == Long.MAX_VALUE) {
        return; // nothing held; add() wakes us
      }
      // Everything due before the next round goes now: leases acquired at different times fall
      // into step after their first early renewal, and each round is a single call.
      long horizon = System.nanoTime() + window;
      for (LeaseHandle l : leases) {
        if (!l.isFinal() && l.nextDueNanos() - horizon <= 0) {
          due.add(l);
        }
      }
      if (due.isEmpty()) {
        scheduleNext(0);
        return;
      }
      inFlight = true;
    }
    // An attempt must end (and fail over) well before the leases run out: at most one heartbeat.
    long attemptNanos =
        Math.max(MIN_ATTEMPT_NANOS, Math.min(core.settings().attemptTimeout().toNanos(), window));
    List<LeaseHandle> own = new ArrayList<>();
    Map<Long, List<LeaseHandle>> bySession = new LinkedHashMap<>();
    for (LeaseHandle l : due) {
      if (l.session() == 0) {
        own.add(l);
      } else {
        bySession.put(l.session(), new ArrayList<>());
      }
    }
    // A session's keep-alive renews every lease attached to it, due or not.
    for (LeaseHandle l : leases) {
      List<LeaseHandle> group = l.session() == 0 ? null : bySession.get(l.session());
      if (group != null && !l.isFinal()) {
        group.add(l);
      }
    }
    List<CompletableFuture<Boolean>> chunks = new ArrayList<>();
    for (int i = 0; i < own.size(); i += MAX_ITEMS) {
      chunks.add(renew(own.subList(i, Math.min(own.size(), i + MAX_ITEMS)), attemptNanos));
    }
    if (!bySession.isEmpty()) {
      chunks.add(keepSessionsAlive(bySession, attemptNanos));
    }
    long windowNanos = window;
    CompletableFuture.allOf(chunks.toArray(CompletableFuture[]::new))
        .whenComplete(
            (v, e) -> {
              boolean ok = chunks.stream().allMatch(c -> c.getNow(false));
              synchronized (this) {
                inFlight = false;
                failures = ok ? 0 : failures + 1;
                if (!stopped) {
                  long retry =
                      ok
                          ? 0
                          : Math.min(
                              windowNanos / 4,
                              core.settings()
                                  .retry()
                                  .backoff(failures, ThreadLocalRandom.current().nextDouble())
                                  .toNanos());
                  scheduleNext(retry);
                }
              }
            });
  }

  /**
   * Schedules the next round: after {@code retryNanos} if a round failed, else when the first lease
   * is due.
   */
  private void scheduleNext(long retryNanos) {
    long at;
    if (retryNanos > 0) {
      at = System.nanoTime() + retryNanos;
    } else {
      Optional<Long> first =
          leases.stream()
              .filter(l -> !l.isFinal())
              .map(LeaseHandle::nextDueNanos)
              .min((a, b) -> Long.compare(a - b, 0));
      if (first.isEmpty()) {
        return;
      }
      at = first.get();
    }
    if (wakeUp != null) {
      wakeUp.cancel(false);
    }
    wakeUpAt = at;
    wakeUp = core.schedule(this::round, at - System.nanoTime());
  }

  /** One Renew call for {@code batch}; completes with whether it succeeded. */
  private CompletableFuture<Boolean> renew(List<LeaseHandle> batch, long attemptNanos) {
    RenewRequest.Builder request = RenewRequest.newBuilder();
    for (LeaseHandle l : batch) {
      request.addItems(RenewItem.newBuilder().setName(l.name()).setToken(l.token()));
    }
    return core.calls()
        .send(
            Calls.Target.WRITE,
            LeasesGrpc.getRenewMethod(),
            request.build(),
            "Renew",
            System.nanoTime() + attemptNanos,
            attemptNanos,
            1,
            core.keepAliveLane())
        .handle(
            (sent, error) -> {
              if (error != null) {
                LOG.debug(
                    "renewal of {} leases failed: {}",
                    batch.size(),
                    Futures.unwrap(error).toString());
                return false;
              }
              batch.forEach(l -> l.asked(sent.sentNanos()));
              apply(batch, sent.value(), sent.sentNanos());
              return true;
            });
  }

  /**
   * One KeepAlive call for the sessions of {@code bySession}; completes with whether it succeeded.
   */
  private CompletableFuture<Boolean> keepSessionsAlive(
      Map<Long, List<LeaseHandle>> bySession, long attemptNanos) {
    KeepAliveRequest request =
        KeepAliveRequest.newBuilder().addAllSessions(bySession.keySet()).build();
    return core.calls()
        .send(
            Calls.Target.WRITE,
            LeasesGrpc.getKeepAliveMethod(),
            request,
            "KeepAlive",
            System.nanoTime() + attemptNanos,
            attemptNanos,
            1,
            core.keepAliveLane())
        .handle(
            (sent, error) -> {
              if (error != null) {
                LOG.debug(
                    "keep-alive of {} sessions failed: {}",
                    bySession.size(),
                    Futures.unwrap(error).toString());
                return false;
              }
              KeepAliveResponse response = sent.value();
              Optional<Duration> heartbeat =
                  response.hasHeartbeatInterval()
                      ? Optional.of(Protos.duration(response.getHeartbeatInterval()))
                      : Optional.empty();
              for (KeepAliveResult r : response.getResultsList()) {
                List<LeaseHandle> group = bySession.get(r.getSession());
                if (group == null) {
                  continue;
                }
                group.forEach(l -> l.asked(sent.sentNanos()));
                switch (r.getOutcome()) {
                  case RENEWED -> {
                    Optional<Duration> ttl =
                        r.hasTtl() ? Optional.of(Protos.duration(r.getTtl())) : Optional.empty();
                    core.session().renewed(r.getSession(), sent.sentNanos());
                    group.forEach(l -> l.renewed(sent.sentNanos(), ttl, heartbeat));
                    Long before = sessionEndings.put(r.getSession(), r.getLeasesEnded());
                    if (r.getLeasesEnded() > (before == null ? 0 : before)) {
                      // Some attached lease ended (revoked, transferred, released): a Renew of them
                      // answers NOT_HELD for those that are gone, and they are LOST.
                      renew(group, attemptNanos);
                    }
                  }
                  case NOT_HELD -> {
                    core.session().ended(r.getSession());
                    sessionEndings.remove(r.getSession());
                    group.forEach(LeaseHandle::notHeld);
                  }
                  case REJECTED ->
                      group.forEach(l -> l.renewalRefused(Protos.rejection(r.getRejection())));
                  default -> {}
                }
              }
              return true;
            });
  }

  private static void apply(List<LeaseHandle> batch, RenewResponse response, long sentNanos) {
    List<RenewResult> results = response.getResultsList();
    for (int i = 0; i < batch.size() && i < results.size(); i++) {
      LeaseHandle l = batch.get(i);
      RenewResult r = results.get(i);
      if (!r.getName().equals(l.name()) || r.getToken() != l.token()) {
        continue; // not the answer for this item; it stays due and is sent again
      }
      switch (r.getOutcome()) {
        case RENEWED ->
            l.renewed(
                sentNanos,
                r.hasTtl() ? Optional.of(Protos.duration(r.getTtl())) : Optional.empty(),
                r.hasHeartbeatInterval()
                    ? Optional.of(Protos.duration(r.getHeartbeatInterval()))
                    : Optional.empty());
        case NOT_HELD -> l.notHeld();
        // Still held, but the policy now in force will not renew it: it stays due and is asked
        // again.
        case REJECTED -> l.renewalRefused(Protos.rejection(r.getRejection()));
        default -> {} // an outcome newer than this SDK: not renewed
      }
    }
  }
}
