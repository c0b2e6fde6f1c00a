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
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cuts a client off from the cluster while it is {@link #cut()}, as if its network (or the process)
 * stopped: calls in flight are cut off and new ones fail with UNAVAILABLE.
 */
final class Partition implements ClientInterceptor {
  private final Set<ClientCall<?, ?>> active = ConcurrentHashMap.newKeySet();
  private volatile boolean cut;

  void cut() {
    cut = true;
    for (ClientCall<?, ?> c : active) {
      c.cancel("partitioned by the test", null);
    }
  }

  void heal() {
    cut = false;
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(
      MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    if (cut) {
      return new Refused<>();
    }
    ClientCall<Q, R> call = next.newCall(method, options);
    return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        super.start(
            new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
              @Override
              public void onClose(Status status, Metadata trailers) {
                active.remove(call);
                super.onClose(status, trailers);
              }
            },
            headers);
        // Registered once started: a network never cancels a call before it starts (gRPC then
        // throws on start). A cut() under way either finds it here or is seen just below.
        active.add(call);
        if (cut) {
          call.cancel("partitioned by the test", null);
        }
      }
    };
  }

  /** A call that fails at once, reported on another thread like a real transport failure. */
  private static final class Refused<Q, R> extends ClientCall<Q, R> {
    @Override
    public void start(Listener<R> listener, Metadata headers) {
      CompletableFuture.runAsync(
          () ->
              listener.onClose(
                  Status.UNAVAILABLE.withDescription("partitioned by the test"), new Metadata()));
    }

    @Override
    public void request(int numMessages) {}

    @Override
    public void cancel(String message, Throwable cause) {}

    @Override
    public void halfClose() {}

    @Override
    public void sendMessage(Q message) {}
  }
}
