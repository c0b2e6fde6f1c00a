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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the calls a client makes, per method (e.g. {@code "Renew"}), and how many of them
 * succeeded.
 */
final class CallCounter implements ClientInterceptor {
  private final ConcurrentHashMap<String, AtomicInteger> started = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, AtomicInteger> succeeded = new ConcurrentHashMap<>();

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(
      MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    String name = method.getBareMethodName();
    started.computeIfAbsent(name, m -> new AtomicInteger()).incrementAndGet();
    return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        super.start(
            new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
              @Override
              public void onClose(Status status, Metadata trailers) {
                if (status.isOk()) {
                  succeeded.computeIfAbsent(name, m -> new AtomicInteger()).incrementAndGet();
                }
                super.onClose(status, trailers);
              }
            },
            headers);
      }
    };
  }

  /** Calls started. */
  int count(String method) {
    AtomicInteger n = started.get(method);
    return n == null ? 0 : n.get();
  }

  /** Calls that ended OK. */
  int succeeded(String method) {
    AtomicInteger n = succeeded.get(method);
    return n == null ? 0 : n.get();
  }
}
