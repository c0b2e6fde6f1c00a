package io.leasehold.server.rpc;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.StatusRuntimeException;

/**
 * A call's listener that checks each request before the handler sees it: a refused request closes
 * the call with the refusal, and the handler then hears neither the request, nor the half-close,
 * nor readiness. What the call's end (complete, cancel) reaches is the subclass's to say. The
 * authorization point and the limits against abuse are both such gates.
 */
public abstract class RequestGate<Q>
    extends ForwardingServerCallListener.SimpleForwardingServerCallListener<Q> {
  private final ServerCall<Q, ?> call;
  private boolean refused;

  protected RequestGate(ServerCall.Listener<Q> delegate, ServerCall<Q, ?> call) {
    super(delegate);
    this.call = call;
  }

  /** Why {@code message} is refused, or null to pass it on to the handler. */
  protected abstract StatusRuntimeException refusal(Q message);

  /** Runs after a refusal closed the call (the caller is already answered). */
  protected void afterRefusal(StatusRuntimeException why) {}

  protected final boolean refused() {
    return refused;
  }

  @Override
  public void onMessage(Q message) {
    if (refused) {
      return;
    }
    StatusRuntimeException why = refusal(message);
    if (why != null) {
      refused = true;
      Metadata trailers = why.getTrailers();
      call.close(why.getStatus(), trailers == null ? new Metadata() : trailers);
      afterRefusal(why);
      return;
    }
    super.onMessage(message);
  }

  @Override
  public void onHalfClose() {
    if (!refused) {
      super.onHalfClose();
    }
  }

  @Override
  public void onReady() {
    if (!refused) {
      super.onReady();
    }
  }
}
