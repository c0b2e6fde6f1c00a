package io.leasehold.client.internal;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.CloseSessionRequest;
import io.leasehold.proto.v1.CreateSessionRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's one session, which the leases it acquires without a TTL of their own are attached
 * to: created on first use, kept alive by the {@link KeepAlive} loop with one item per round, and
 * replaced by a new one on the next acquisition once the cluster says it is gone. A cluster that
 * cannot create sessions (older code, or a log format that does not have them yet) is asked again
 * only after a while; meanwhile leases get their own TTL.
 */
final class ClientSession {
  private static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);
  private static final long UNSUPPORTED_RETRY_NANOS = TimeUnit.SECONDS.toNanos(30);

  private final ClientCore core;

  // Guarded by this.
  private CompletableFuture<OptionalLong> current;
  private long unsupportedUntil;

  /**
   * When the latest request known to have renewed session {@code renewedId} was sent (a keep-alive
   * answered RENEWED; an acquisition attached to it, which renews it too). Guarded by this.
   */
  private long renewedId;

  private long renewedSentNanos;

  /** The current session's TTL, once created. Guarded by this. */
  private long ttlNanos;

  ClientSession(ClientCore core) {
    this.core = core;
  }

  /**
   * The live session to attach a new lease to, creating one if there is none; empty when sessions
   * are off, or the cluster could not create one (the lease then gets its own TTL).
   */
  synchronized CompletableFuture<OptionalLong> id() {
    if (!core.settings().sessions()
        || (unsupportedUntil != 0 && System.nanoTime() - unsupportedUntil < 0)) {
      return CompletableFuture.completedFuture(OptionalLong.empty());
    }
    if (current != null && (!current.isDone() || current.join().isPresent())) {
      return current;
    }
    CreateSessionRequest.Builder request =
        CreateSessionRequest.newBuilder().setHolder(core.settings().holder());
    core.settings().sessionTtl().ifPresent(ttl -> request.setTtl(Protos.duration(ttl)));
    CompletableFuture<OptionalLong> created =
        core.calls()
            .call(
                Calls.Target.WRITE,
                LeasesGrpc.getCreateSessionMethod(),
                request.build(),
                "CreateSession")
            .handle(
                (r, error) -> {
                  if (error != null) {
                    notCreated(Futures.unwrap(error));
                    return OptionalLong.empty();
                  }
                  if (r.getOutcome() != Outcome.GRANTED) {
                    LOG.warn(
                        "the cluster refused this client a session ({}); leases get their own TTL",
                        r.getRejection().getMessage());
                    return OptionalLong.empty();
                  }
                  LOG.debug(
                      "session {} created (TTL {} s)",
                      r.getSession().getId(),
                      r.getSession().getTtl().getSeconds());
                  synchronized (this) {
                    ttlNanos = Protos.duration(r.getSession().getTtl()).toNanos();
                  }
                  return OptionalLong.of(r.getSession().getId());
                });
    current = created;
    return created;
  }

  private synchronized void notCreated(Throwable error) {
    Status.Code code =
        error instanceof StatusRuntimeException s ? s.getStatus().getCode() : Status.Code.UNKNOWN;
    String text = String.valueOf(error.getMessage());
    if (code == Status.Code.UNIMPLEMENTED
        || (code == Status.Code.UNAVAILABLE && text.contains("log format"))) {
      unsupportedUntil = System.nanoTime() + UNSUPPORTED_RETRY_NANOS;
      LOG.info("the cluster does not offer sessions yet ({}); leases get their own TTL", text);
    } else {
      LOG.debug("creating a session failed: {}", error.toString());
    }
    current = null;
  }

  /**
   * A request sent at {@code sentNanos} renewed session {@code id}: the cluster keeps the session,
   * and with it every lease attached to it, for at least one session TTL from then (on the leader's
   * clock, which applied the request after it was sent).
   */
  synchronized void renewed(long id, long sentNanos) {
    if (id != renewedId) {
      renewedId = id;
      renewedSentNanos = sentNanos;
    } else if (sentNanos - renewedSentNanos > 0) {
      renewedSentNanos = sentNanos;
    }
  }

  /**
   * When the latest request known to have renewed session {@code id} was sent, if one is known. A
   * lease granted in the session lives as long as the session, so however late its grant was
   * answered, it is held for a session TTL from this time at least.
   */
  synchronized OptionalLong renewedSent(long id) {
    return id != 0 && id == renewedId ? OptionalLong.of(renewedSentNanos) : OptionalLong.empty();
  }

  /** The TTL of the session created last (0 before one is). */
  synchronized long ttlNanos() {
    return ttlNanos;
  }

  /**
   * The cluster said the session is gone (expired or closed): the next acquisition creates another.
   */
  synchronized void ended(long id) {
    if (current != null && current.isDone() && current.join().orElse(0) == id) {
      current = null;
    }
  }

  /** The session leases are attached to now, if one was created and is not known to be gone. */
  synchronized OptionalLong currentId() {
    return current != null && current.isDone() ? current.join() : OptionalLong.empty();
  }

  /**
   * Closes the session, if there is one, ending every lease still attached; for the client's close.
   */
  CompletableFuture<Void> close() {
    OptionalLong id;
    synchronized (this) {
      id = current != null && current.isDone() ? current.join() : OptionalLong.empty();
      current = null;
    }
    if (id.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return core.calls()
        .call(
            Calls.Target.WRITE,
            LeasesGrpc.getCloseSessionMethod(),
            CloseSessionRequest.newBuilder().setSession(id.getAsLong()).build(),
            "CloseSession")
        .thenApply(r -> null);
  }
}
