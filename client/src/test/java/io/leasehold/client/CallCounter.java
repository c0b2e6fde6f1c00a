package io.leasehold.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the calls a client makes, per method (e.g. {@code "Renew"}). */
final class CallCounter implements ClientInterceptor {
  private final ConcurrentHashMap<String, AtomicInteger> counts = new ConcurrentHashMap<>();

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    counts.computeIfAbsent(method.getBareMethodName(), m -> new AtomicInteger()).incrementAndGet();
    return next.newCall(method, options);
  }

  int count(String method) {
    AtomicInteger n = counts.get(method);
    return n == null ? 0 : n.get();
  }

  void reset() {
    counts.clear();
  }
}
