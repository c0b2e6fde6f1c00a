package io.leasehold.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;

/**
 * Holds back, while closed, what a client sends on one method (its request) or hears on another
 * (its answer), and lets it all through, in order, when opened: a way to stop a call at an exact
 * point without touching the cluster. Only calls started while the gate is closed are held.
 */
final class CallGate implements ClientInterceptor {
  enum Side {
    REQUEST,
    ANSWER
  }

  private final String method;
  private final Side side;
  private final List<Runnable> held = new ArrayList<>();
  private boolean closed;
  private int heldCalls;

  /** {@code fullMethodName}, e.g. {@code leasehold.v1.Leases/Release}. */
  CallGate(String fullMethodName, Side side) {
    this.method = fullMethodName;
    this.side = side;
  }

  synchronized void close() {
    closed = true;
  }

  /** How many calls the gate has held back so far. */
  synchronized int heldCalls() {
    return heldCalls;
  }

  void open() {
    List<Runnable> release;
    synchronized (this) {
      closed = false;
      release = new ArrayList<>(held);
      held.clear();
    }
    release.forEach(Runnable::run);
  }

  /** Runs {@code step} now, or keeps it for {@link #open} if the gate is closed. */
  private void passOrHold(Runnable step) {
    synchronized (this) {
      if (closed) {
        held.add(step);
        return;
      }
    }
    step.run();
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(
      MethodDescriptor<Q, R> descriptor, CallOptions options, Channel next) {
    ClientCall<Q, R> call = next.newCall(descriptor, options);
    synchronized (this) {
      if (!closed || !descriptor.getFullMethodName().equals(method)) {
        return call;
      }
      heldCalls++;
    }
    if (side == Side.REQUEST) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
        @Override
        public void sendMessage(Q message) {
          passOrHold(() -> delegate().sendMessage(message));
        }

        @Override
        public void halfClose() {
          passOrHold(() -> delegate().halfClose());
        }
      };
    }
    return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        super.start(
            new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
              @Override
              public void onHeaders(Metadata h) {
                passOrHold(() -> delegate().onHeaders(h));
              }

              @Override
              public void onMessage(R message) {
                passOrHold(() -> delegate().onMessage(message));
              }

              @Override
              public void onClose(Status status, Metadata trailers) {
                passOrHold(() -> delegate().onClose(status, trailers));
              }
            },
            headers);
      }
    };
  }
}
