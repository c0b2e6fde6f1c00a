package io.leasehold.server.rpc;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.StatusRuntimeException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * A call's listener that checks each request before the handler sees it: a refused request closes
 * the call with the refusal, and the handler then hears neither the request, nor the half-close,
 * nor readiness. What the call's end (complete, cancel) reaches is the subclass's to say. The
 * authorization point and the limits against abuse are both such gates.
 *
 * <p>A gate may take a second look before it refuses ({@link #secondLook}): the request is then
 * held, with whatever the call hears after it, until the second look is done, and checked once
 * more. The listener's methods are synchronized, so what gRPC delivers and what a second look
 * releases reach the handler one at a time and in order.
 */
public abstract class RequestGate<Q>
    extends ForwardingServerCallListener.SimpleForwardingServerCallListener<Q> {
  private final ServerCall<Q, ?> call;
  private boolean refused;
  private boolean cancelled;

  /** What the call heard while a request waits for its second look; null when none waits. */
  private ArrayDeque<Runnable> held;

  protected RequestGate(ServerCall.Listener<Q> delegate, ServerCall<Q, ?> call) {
    super(delegate);
    this.call = call;
  }

  /** Why {@code message} is refused, or null to pass it on to the handler. */
  protected abstract StatusRuntimeException refusal(Q message);

  /**
   * Something to wait for before refusing {@code message} for good, after which it is checked again
   * (and refused if it still fails, whatever the wait's outcome); null to refuse at once.
   */
  protected CompletableFuture<?> secondLook(Q message) {
    return null;
  }

  /** Runs after a refusal closed the call (the caller is already answered). */
  protected void afterRefusal(StatusRuntimeException why) {}

  protected final synchronized boolean refused() {
    return refused;
  }

  @Override
  public synchronized void onMessage(Q message) {
    if (refused || cancelled) {
      return;
    }
    if (held != null) {
      held.add(() -> onMessage(message));
      return;
    }
    StatusRuntimeException why = refusal(message);
    if (why == null) {
      super.onMessage(message);
      return;
    }
    CompletableFuture<?> wait = secondLook(message);
    if (wait == null) {
      refuse(why);
      return;
    }
    held = new ArrayDeque<>();
    wait.whenComplete((ignored, failure) -> lookAgain(message));
  }

  private synchronized void lookAgain(Q message) {
    ArrayDeque<Runnable> after = held;
    held = null;
    if (refused || cancelled) {
      return;
    }
    StatusRuntimeException why = refusal(message);
    if (why != null) {
      refuse(why);
      return;
    }
    super.onMessage(message);
    // Replayed through the public methods, so a later request may be held in its turn (and what
    // follows it with it).
    Runnable next;
    while (held == null && (next = after.poll()) != null) {
      next.run();
    }
    if (held != null) {
      held.addAll(after);
    }
  }

  private void refuse(StatusRuntimeException why) {
    refused = true;
    Metadata trailers = why.getTrailers();
    call.close(why.getStatus(), trailers == null ? new Metadata() : trailers);
    afterRefusal(why);
  }

  @Override
  public synchronized void onHalfClose() {
    if (refused || cancelled) {
      return;
    }
    if (held != null) {
      held.add(this::onHalfClose);
      return;
    }
    super.onHalfClose();
  }

  @Override
  public synchronized void onReady() {
    if (refused || cancelled) {
      return;
    }
    if (held != null) {
      held.add(this::onReady);
      return;
    }
    super.onReady();
  }

  @Override
  public synchronized void onCancel() {
    cancelled = true;
    held = null;
    super.onCancel();
  }

  @Override
  public synchronized void onComplete() {
    super.onComplete();
  }
}
