package io.leasehold.server.auth;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.Permission;
import io.leasehold.server.rpc.GrpcErrors;
import io.leasehold.server.rpc.RequestGate;
import io.leasehold.statemachine.core.AccessView;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one authorization point: every call of the Leasehold services passes here before its handler
 * sees the request. It finds the caller ({@link Authenticator}), puts it in the call's context
 * ({@link Caller}), and checks the method's rule ({@link AccessRules}) against the roles in force
 * on the request the handler will receive, unchanged. Health and reflection pass without an
 * identity; a method without a rule is refused.
 *
 * <p>The roles in force are those this node has applied, which on a follower may lag a grant the
 * leader has already acknowledged. So a request the local roles refuse is held until this node has
 * caught up with what was committed when it arrived (a read barrier), and checked again: a grant,
 * once answered, is in force on every node, as a linearizable read would see it.
 */
public final class Authorizer implements ServerInterceptor {
  private static final Logger LOG = LoggerFactory.getLogger(Authorizer.class);

  /** What the authorization point reports of refused admin actions, for the audit history. */
  public interface DeniedSink {
    void denied(Caller caller, String method, String reason);
  }

  private final boolean enabled;
  private final Authenticator authenticator;
  private final Supplier<AccessView> access;
  private final Supplier<String> initialAdmin;
  private final DeniedSink denied;
  private final Supplier<CompletableFuture<?>> caughtUp;

  /**
   * @param enabled whether requests must carry an identity; without, every call passes as {@link
   *     Caller#OPEN}
   * @param initialAdmin the identity that administers the cluster until an admin role is granted
   *     ("" if none)
   * @param caughtUp completes once this node has applied everything committed when it was called
   */
  public Authorizer(
      boolean enabled,
      Authenticator authenticator,
      Supplier<AccessView> access,
      Supplier<String> initialAdmin,
      DeniedSink denied,
      Supplier<CompletableFuture<?>> caughtUp) {
    this.enabled = enabled;
    this.authenticator = authenticator;
    this.access = access;
    this.initialAdmin = initialAdmin;
    this.denied = denied;
    this.caughtUp = caughtUp;
  }

  /**
   * For a request made outside gRPC (the dashboard): its caller, found as for a gRPC call, and then
   * why that caller may not make {@code request} through {@code method}, as the gRPC rule says.
   *
   * @return the caller ({@link Caller#OPEN} when authentication is off)
   * @throws StatusException UNAUTHENTICATED without a valid identity, PERMISSION_DENIED when the
   *     rule refuses
   */
  public Caller check(
      String authorization,
      javax.net.ssl.SSLSession tls,
      io.grpc.MethodDescriptor<?, ?> method,
      Object request)
      throws StatusException {
    Optional<AccessRules.Rule> rule = AccessRules.of(method.getFullMethodName());
    if (rule.isEmpty()) {
      throw Status.PERMISSION_DENIED
          .withDescription(method.getFullMethodName() + " has no authorization rule")
          .asException();
    }
    if (!enabled) {
      return Caller.OPEN;
    }
    Caller caller = authenticator.identify(authorization, tls);
    Optional<String> why = denial(rule.get(), request, caller);
    if (why.isPresent()) {
      try {
        caughtUp.get().get(SECOND_LOOK_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException | TimeoutException e) {
        // Refused on what this node has: it could not catch up.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      why = denial(rule.get(), request, caller);
    }
    if (why.isPresent()) {
      throw Status.PERMISSION_DENIED.withDescription(GrpcErrors.bounded(why.get())).asException();
    }
    return caller;
  }

  /** How long the dashboard waits to catch up before it refuses. */
  private static final Duration SECOND_LOOK_WAIT = Duration.ofSeconds(5);

  private Optional<String> denial(AccessRules.Rule rule, Object request, Caller caller) {
    return AccessRules.denial(
        rule, request, access.get().access(caller.identity(), initialAdmin.get()));
  }

  static boolean exempt(String serviceName) {
    return serviceName.equals("grpc.health.v1.Health")
        || serviceName.startsWith("grpc.reflection.");
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    if (exempt(String.valueOf(call.getMethodDescriptor().getServiceName()))) {
      return next.startCall(call, headers);
    }
    Optional<AccessRules.Rule> rule = AccessRules.of(method);
    if (rule.isEmpty()) {
      return refuse(
          call, Status.PERMISSION_DENIED.withDescription(method + " has no authorization rule"));
    }
    if (!enabled) {
      return next.startCall(call, headers);
    }
    Caller caller;
    try {
      caller = authenticator.identify(call, headers);
    } catch (StatusException e) {
      return refuse(call, e.getStatus());
    }
    Context context = Context.current().withValue(Caller.KEY, caller);
    ServerCall.Listener<Q> handler = Contexts.interceptCall(context, call, headers, next);
    return new Checked<>(handler, call, caller, method, rule.get());
  }

  private static <Q> ServerCall.Listener<Q> refuse(ServerCall<Q, ?> call, Status status) {
    call.close(status, new Metadata());
    return new ServerCall.Listener<>() {};
  }

  /**
   * Checks the request before the handler sees it; a refused call hears nothing more, its end
   * included.
   */
  private final class Checked<Q> extends RequestGate<Q> {
    private final Caller caller;
    private final String method;
    private final AccessRules.Rule rule;

    Checked(
        ServerCall.Listener<Q> delegate,
        ServerCall<Q, ?> call,
        Caller caller,
        String method,
        AccessRules.Rule rule) {
      super(delegate, call);
      this.caller = caller;
      this.method = method;
      this.rule = rule;
    }

    // Bounded: a refusal quoting a huge name must not outgrow the client's header limit (it would
    // reach the client as a broken stream, INTERNAL).
    @Override
    protected StatusRuntimeException refusal(Q message) {
      return denial(rule, message, caller)
          .map(
              why ->
                  Status.PERMISSION_DENIED
                      .withDescription(GrpcErrors.bounded(why))
                      .asRuntimeException())
          .orElse(null);
    }

    // The handler then runs on the pool, not on the thread that applied the barrier.
    @Override
    protected CompletableFuture<?> secondLook(Q message) {
      return caughtUp.get().handleAsync((v, e) -> v, ForkJoinPool.commonPool());
    }

    // After the answer: the audit record must not hold up or prevent it.
    @Override
    protected void afterRefusal(StatusRuntimeException why) {
      if (rule.permission() == Permission.ADMIN) {
        try {
          denied.denied(caller, method, why.getStatus().getDescription());
        } catch (RuntimeException e) {
          LOG.warn(
              "refused {} to {}; the audit record of it failed: {}",
              method,
              caller.identity(),
              e.toString());
        }
      }
    }

    @Override
    public void onComplete() {
      if (!refused()) {
        super.onComplete();
      }
    }
  }
}
