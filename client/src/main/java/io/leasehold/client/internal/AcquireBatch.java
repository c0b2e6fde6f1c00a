package io.leasehold.client.internal;

import io.leasehold.client.LeaseLostException;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdException;
import io.leasehold.proto.v1.AcquireManyItem;
import io.leasehold.proto.v1.AcquireManyRequest;
import io.leasehold.proto.v1.AcquireManyResponse;
import io.leasehold.proto.v1.AcquireManyResult;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.KeepAliveRequest;
import io.leasehold.proto.v1.KeepAliveResult;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RejectReason;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * One AcquireMany call for up to 1,000 names of an {@code acquireAll}. Each name still goes through
 * its own {@link NameSlot}, so that no two acquisitions of a name by this client are ever out at
 * once and a granted name becomes an ordinary lease handle; the slot's attempt, instead of an
 * Acquire of its own, joins this batch. The batch is sent once every name has joined or was
 * answered by its slot without a call (this client already holds it). A name whose slot asks again
 * after the batch went (a grant of a token an earlier handle had, given back) asks with an Acquire
 * of its own.
 *
 * <p>All or nothing: if a name was answered without a call, nothing is sent and every name that
 * joined is {@link Outcome#SKIPPED}, as the cluster would have answered. A name whose slot asks
 * again after the batch went fails, and the whole call with it.
 */
final class AcquireBatch {
  private final ClientCore core;
  private final List<String> names;
  private final LeaseOptions options;
  private final boolean allOrNothing;

  // Guarded by this.
  private final Map<String, CompletableFuture<Calls.Sent<Grant>>> joined = new LinkedHashMap<>();
  private final Set<String> answeredWithoutCall = new HashSet<>();
  private boolean sent;

  AcquireBatch(ClientCore core, List<String> names, LeaseOptions options, boolean allOrNothing) {
    this.core = core;
    this.names = names;
    this.options = options;
    this.allOrNothing = allOrNothing;
  }

  /**
   * The attempt of {@code name}'s waiter: joins the batch, or after it went, an Acquire alone. All
   * or nothing never asks for one name alone: that could get it where the others were not, or miss
   * it where they were. Such a name fails instead, and the others granted with it are given back
   * ({@link Deliveries#deliverAll}).
   */
  CompletableFuture<Calls.Sent<Grant>> attempt(String name) {
    CompletableFuture<Calls.Sent<Grant>> f;
    synchronized (this) {
      if (sent || joined.containsKey(name)) {
        f = null;
      } else {
        f = new CompletableFuture<>();
        joined.put(name, f);
      }
    }
    if (f == null) {
      if (allOrNothing) {
        return CompletableFuture.failedFuture(
            new LeaseLostException(
                name
                    + ": granted with the token of an earlier lease of this client whose release"
                    + " was not confirmed, so given back; all or nothing does not ask for one name"
                    + " alone"));
      }
      return core.acquireAttempt(name, options, Duration.ZERO);
    }
    sendIfComplete();
    return f;
  }

  /** {@code name}'s waiter has its answer; if it never joined, its slot answered it alone. */
  void settled(String name) {
    synchronized (this) {
      if (sent || joined.containsKey(name)) {
        return;
      }
      answeredWithoutCall.add(name);
    }
    sendIfComplete();
  }

  private void sendIfComplete() {
    Map<String, CompletableFuture<Calls.Sent<Grant>>> batch;
    boolean skipAll;
    synchronized (this) {
      if (sent || joined.size() + answeredWithoutCall.size() < names.size()) {
        return;
      }
      sent = true;
      batch = new LinkedHashMap<>(joined);
      skipAll = allOrNothing && !answeredWithoutCall.isEmpty();
    }
    if (batch.isEmpty()) {
      return;
    }
    if (skipAll) {
      batch.values().forEach(f -> f.complete(new Calls.Sent<>(Grant.skipped(), System.nanoTime())));
      return;
    }
    send(batch, true);
  }

  /**
   * Sends the batch, in the client's session unless the options give a TTL; a session that ended
   * meanwhile is replaced, once, by a new one.
   */
  private void send(Map<String, CompletableFuture<Calls.Sent<Grant>>> batch, boolean retrySession) {
    boolean withSession = options.ttl().isEmpty();
    CompletableFuture<OptionalLong> session =
        withSession ? core.session().id() : CompletableFuture.completedFuture(OptionalLong.empty());
    session
        .thenCompose(
            id -> {
              ScheduledFuture<?> keepAlive = keepAliveWhileWaiting(id);
              return call(batch, id)
                  .whenComplete((r, e) -> keepAlive.cancel(false))
                  .thenApply(sent -> new Object[] {id, sent});
            })
        .whenComplete(
            (pair, error) -> {
              if (error != null) {
                Throwable cause = Futures.unwrap(error);
                batch.values().forEach(f -> f.completeExceptionally(cause));
                return;
              }
              OptionalLong id = (OptionalLong) pair[0];
              @SuppressWarnings("unchecked")
              Calls.Sent<AcquireManyResponse> sent = (Calls.Sent<AcquireManyResponse>) pair[1];
              AcquireManyResponse r = sent.value();
              if (id.isPresent() && retrySession && noSession(r)) {
                core.session().ended(id.getAsLong());
                send(batch, false);
                return;
              }
              deliver(batch, r, sent.sentNanos());
            });
  }

  /**
   * Keeps the batch's session alive while the batch waits for its answer, once a heartbeat (a third
   * of the session's TTL). The keep-alive loop renews only sessions that hold leases, and a batch
   * of a thousand names behind others can wait longer than a session TTL on a cold or loaded
   * cluster: without this the session would end before the grants are applied, and the grants,
   * answered late, would count from their send only. Each keep-alive answered RENEWED lets the
   * leases the batch is granted count from its send instead ({@link ClientSession#renewed}).
   */
  private ScheduledFuture<?> keepAliveWhileWaiting(OptionalLong session) {
    long ttl = core.session().ttlNanos();
    if (session.isEmpty() || ttl <= 0) {
      return ClientCore.CANCELLED;
    }
    long id = session.getAsLong();
    long heartbeat = ttl / 3;
    return core.scheduleWithFixedDelay(
        () ->
            core.calls()
                .send(
                    Calls.Target.WRITE,
                    LeasesGrpc.getKeepAliveMethod(),
                    KeepAliveRequest.newBuilder().addSessions(id).build(),
                    "KeepAlive",
                    System.nanoTime() + heartbeat,
                    heartbeat,
                    1,
                    core.keepAliveLane())
                .thenAccept(
                    sent -> {
                      for (KeepAliveResult r : sent.value().getResultsList()) {
                        if (r.getSession() == id && r.getOutcome() == Outcome.RENEWED) {
                          core.keepAlive().sessionRenewed(id, sent.sentNanos());
                        }
                      }
                    }),
        heartbeat);
  }

  private CompletableFuture<Calls.Sent<AcquireManyResponse>> call(
      Map<String, CompletableFuture<Calls.Sent<Grant>>> batch, OptionalLong session) {
    Attributes attributes = Protos.attributes(options.attributes());
    AcquireManyRequest.Builder request =
        AcquireManyRequest.newBuilder()
            .setHolder(core.settings().holder())
            .setAllOrNothing(allOrNothing)
            .setSession(session.orElse(0))
            .setRequestId(core.requestIds().next());
    options.ttl().ifPresent(ttl -> request.setTtl(Protos.duration(ttl)));
    for (String name : batch.keySet()) {
      request.addItems(AcquireManyItem.newBuilder().setName(name).setAttributes(attributes));
    }
    return core.calls()
        .send(
            Calls.Target.WRITE,
            LeasesGrpc.getAcquireManyMethod(),
            request.build(),
            "AcquireMany of " + batch.size() + " names",
            System.nanoTime() + core.settings().requestTimeout().toNanos(),
            core.settings().attemptTimeout().toNanos(),
            Integer.MAX_VALUE);
  }

  /** Whether the session the batch named was gone: every name refused NO_SESSION. */
  private static boolean noSession(AcquireManyResponse r) {
    return r.getResultsCount() > 0
        && r.getResultsList().stream()
            .allMatch(
                x ->
                    x.getOutcome() == Outcome.SKIPPED
                        || (x.getOutcome() == Outcome.REJECTED
                            && x.getRejection().getReason() == RejectReason.NO_SESSION));
  }

  private static void deliver(
      Map<String, CompletableFuture<Calls.Sent<Grant>>> batch,
      AcquireManyResponse r,
      long sentNanos) {
    Map<String, AcquireManyResult> byName = new LinkedHashMap<>();
    r.getResultsList().forEach(x -> byName.put(x.getName(), x));
    batch.forEach(
        (name, f) -> {
          AcquireManyResult x = byName.get(name);
          if (x == null) {
            f.completeExceptionally(
                new LeaseholdException(name + ": the AcquireMany reply has no result for it"));
          } else {
            f.complete(new Calls.Sent<>(Grant.of(x, r), sentNanos));
          }
        });
  }
}
