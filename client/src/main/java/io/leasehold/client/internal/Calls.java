package io.leasehold.client.internal;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.leasehold.client.ClientClosedException;
import io.leasehold.client.ClusterUnavailableException;
import io.leasehold.client.LeaseholdException;
import io.leasehold.client.internal.ConnectionDiagnosis.Diagnosis;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Unary calls with deadlines, failover and retries: each attempt has its own deadline; a failure
 * that may pass (see {@link Errors#retryable}) is retried after a jittered backoff, on another node
 * if the node was the problem, until the request's overall deadline, or until every endpoint failed
 * to connect for a reason no retry mends (see {@link ConnectionDiagnosis}). The SDK only sends
 * requests that are safe to repeat this way (Acquire by the same holder returns the same lease;
 * Renew, Update and reads are idempotent; a repeated Release answers NOT_HELD, which the SDK treats
 * as released).
 */
public final class Calls {
  private static final Logger LOG = LoggerFactory.getLogger(Calls.class);

  /** Which endpoint a call goes to. */
  public enum Target {
    READ,
    WRITE
  }

  /**
   * A reply and when the call's first attempt was sent (System.nanoTime). Not the attempt that got
   * the reply: with a request id, that reply can be the first attempt's, applied earlier, so a
   * lease's validity must count from the first send.
   */
  public record Sent<R>(R value, long sentNanos) {}

  private final Connection connection;
  private final ClientSettings settings;
  private final ScheduledExecutorService scheduler;
  private final BooleanSupplier closed;

  public Calls(
      Connection connection,
      ClientSettings settings,
      ScheduledExecutorService scheduler,
      BooleanSupplier closed) {
    this.connection = connection;
    this.settings = settings;
    this.scheduler = scheduler;
    this.closed = closed;
  }

  /** The call, retried within the client's request timeout. */
  public <Q, R> CompletableFuture<R> call(
      Target target, MethodDescriptor<Q, R> method, Q request, String what) {
    return send(target, method, request, what).thenApply(Sent::value);
  }

  /** As {@link #call}, with the send time of its first attempt. */
  public <Q, R> CompletableFuture<Sent<R>> send(
      Target target, MethodDescriptor<Q, R> method, Q request, String what) {
    long deadline = System.nanoTime() + settings.requestTimeout().toNanos();
    return send(
        target,
        method,
        request,
        what,
        deadline,
        settings.attemptTimeout().toNanos(),
        Integer.MAX_VALUE);
  }

  /**
   * One call with an explicit budget: at most {@code maxAttempts} attempts of at most {@code
   * attemptNanos} each, none starting after {@code deadlineNanos}.
   */
  public <Q, R> CompletableFuture<Sent<R>> send(
      Target target,
      MethodDescriptor<Q, R> method,
      Q request,
      String what,
      long deadlineNanos,
      long attemptNanos,
      int maxAttempts) {
    return send(target, method, request, what, deadlineNanos, attemptNanos, maxAttempts, null);
  }

  /**
   * As {@link #send(Target, MethodDescriptor, Object, String, long, long, int)}, the reply handled
   * on {@code executor} (null: the channel's): keep-alives take their own lane, so that their
   * answers never queue behind other work.
   */
  public <Q, R> CompletableFuture<Sent<R>> send(
      Target target,
      MethodDescriptor<Q, R> method,
      Q request,
      String what,
      long deadlineNanos,
      long attemptNanos,
      int maxAttempts,
      Executor executor) {
    Attempts<Q, R> a =
        new Attempts<>(
            target, method, request, what, deadlineNanos, attemptNanos, maxAttempts, executor);
    a.next();
    return a.result;
  }

  private final class Attempts<Q, R> {
    final Target target;
    final MethodDescriptor<Q, R> method;
    final Q request;
    final String what;
    final long deadlineNanos;
    final long attemptNanos;
    final int maxAttempts;
    final CallOptions options;

    /** The namespace a write acts in, which says where it goes; null for a read. */
    final String namespace;

    final CompletableFuture<Sent<R>> result = new CompletableFuture<>();
    int attempt;
    long firstSentNanos;
    volatile ClientCall<Q, R> current;

    /** The endpoints that failed in a way no retry mends, and why, in the order tried. */
    final Map<String, Diagnosis> diagnosed = new LinkedHashMap<>();

    Attempts(
        Target target,
        MethodDescriptor<Q, R> method,
        Q request,
        String what,
        long deadlineNanos,
        long attemptNanos,
        int maxAttempts,
        Executor executor) {
      this.target = target;
      this.method = method;
      this.request = request;
      this.what = what;
      this.deadlineNanos = deadlineNanos;
      this.attemptNanos = attemptNanos;
      this.maxAttempts = maxAttempts;
      this.namespace = target == Target.WRITE ? Routing.namespace(request) : null;
      this.options =
          executor == null ? CallOptions.DEFAULT : CallOptions.DEFAULT.withExecutor(executor);
      result.whenComplete(
          (v, e) -> {
            ClientCall<Q, R> c = current;
            if (result.isCancelled() && c != null) {
              c.cancel("cancelled by the caller", null);
            }
          });
    }

    void next() {
      if (result.isDone()) {
        return;
      }
      if (closed.getAsBoolean()) {
        result.completeExceptionally(new ClientClosedException(what + ": the client is closed"));
        return;
      }
      attempt++;
      long now = System.nanoTime();
      long timeout = Math.max(1, Math.min(attemptNanos, deadlineNanos - now));
      Endpoint endpoint =
          target == Target.WRITE ? connection.forWrites(namespace) : connection.forReads();
      ClientCall<Q, R> call;
      try {
        call =
            endpoint
                .channel()
                .newCall(method, options.withDeadlineAfter(timeout, TimeUnit.NANOSECONDS));
      } catch (RuntimeException e) {
        // The channel was shut down under us: the client is closing.
        result.completeExceptionally(
            closed.getAsBoolean() ? new ClientClosedException(what + ": the client is closed") : e);
        return;
      }
      current = call;
      if (attempt == 1) {
        firstSentNanos = System.nanoTime();
      }
      long sent = firstSentNanos;
      try {
        start(call, endpoint, sent);
      } catch (RuntimeException e) {
        // A call cancelled before it started (by the caller, or by an interceptor) cannot start,
        // and gRPC then never closes it: an attempt that failed, not one to wait for forever.
        failed(
            endpoint,
            Status.CANCELLED.withDescription("the call could not start: " + e).withCause(e),
            new Metadata());
        return;
      }
      try {
        call.request(1);
        call.sendMessage(request);
        call.halfClose();
      } catch (RuntimeException e) {
        call.cancel("failed to send", e);
        result.completeExceptionally(e);
        return;
      }
      if (result.isCancelled()) {
        call.cancel("cancelled by the caller", null);
      }
    }

    private void start(ClientCall<Q, R> call, Endpoint endpoint, long sent) {
      call.start(
          new ClientCall.Listener<>() {
            private R reply;

            @Override
            public void onHeaders(Metadata headers) {
              connection.answeredWith(headers);
            }

            @Override
            public void onMessage(R message) {
              reply = message;
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              if (status.isOk() && reply != null) {
                if (target == Target.WRITE) {
                  connection.wrote(namespace);
                }
                result.complete(new Sent<>(reply, sent));
              } else if (status.isOk()) {
                failed(endpoint, Status.INTERNAL.withDescription("no reply message"), trailers);
              } else {
                failed(endpoint, status, trailers);
              }
            }
          },
          new Metadata());
    }

    void failed(Endpoint endpoint, Status status, Metadata trailers) {
      if (result.isDone()) {
        return;
      }
      if (closed.getAsBoolean()) {
        result.completeExceptionally(new ClientClosedException(what + ": the client is closed"));
        return;
      }
      if (!Errors.retryable(status.getCode())) {
        result.completeExceptionally(Errors.toException(what, status, false));
        return;
      }
      CompletableFuture<Optional<Diagnosis>> diagnosis =
          connection.diagnosis().diagnose(endpoint, status);
      if (diagnosis.isDone()) {
        retry(endpoint, status, trailers, diagnosis.join());
        return;
      }
      diagnosis.whenComplete(
          (d, e) -> {
            try {
              scheduler.execute(
                  () -> retry(endpoint, status, trailers, d == null ? Optional.empty() : d));
            } catch (RejectedExecutionException stopping) {
              result.completeExceptionally(
                  new ClientClosedException(what + ": the client is closed"));
            }
          });
    }

    /**
     * After a failure worth retrying: again after a backoff, on another node if the node was the
     * problem, unless the deadline or the attempts are spent or every endpoint failed in a way no
     * retry mends (a {@link Diagnosis}), which ends the call at once.
     */
    private void retry(
        Endpoint endpoint, Status status, Metadata trailers, Optional<Diagnosis> diagnosis) {
      if (result.isDone()) {
        return;
      }
      if (closed.getAsBoolean()) {
        result.completeExceptionally(new ClientClosedException(what + ": the client is closed"));
        return;
      }
      connection.failed(endpoint, status, trailers);
      Map<String, Diagnosis> diagnosed;
      synchronized (this) {
        diagnosis.ifPresent(d -> this.diagnosed.put(endpoint.address(), d));
        diagnosed = new LinkedHashMap<>(this.diagnosed);
      }
      if (diagnosis.isPresent() && diagnosed.keySet().containsAll(connection.addresses())) {
        LOG.debug("{}: no endpoint can be connected to: {}", what, diagnosed);
        result.completeExceptionally(connection.diagnosis().exception(what, diagnosed, status));
        return;
      }
      long delay =
          settings.retry().backoff(attempt, ThreadLocalRandom.current().nextDouble()).toNanos();
      LOG.debug(
          "{}: attempt {} at {} failed ({} {}); again in {} ms",
          what,
          attempt,
          endpoint,
          status.getCode(),
          status.getDescription(),
          delay / 1_000_000);
      if (attempt >= maxAttempts || System.nanoTime() + delay - deadlineNanos >= 0) {
        LeaseholdException e = Errors.toException(what, status, attempt < maxAttempts);
        if (!diagnosed.isEmpty() && e instanceof ClusterUnavailableException) {
          // Some endpoints failed for a reason no retry mends, others for one that may pass.
          List<String> cannot = new ArrayList<>();
          diagnosed.forEach((address, d) -> cannot.add(address + " (" + d.reason() + ")"));
          e =
              new ClusterUnavailableException(
                  e.getMessage() + "; could not connect to " + String.join(", ", cannot),
                  status.getCode(),
                  e.getCause());
        }
        result.completeExceptionally(e);
        return;
      }
      try {
        scheduler.schedule(this::next, delay, TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException stopping) {
        result.completeExceptionally(new ClientClosedException(what + ": the client is closed"));
      }
    }
  }
}
