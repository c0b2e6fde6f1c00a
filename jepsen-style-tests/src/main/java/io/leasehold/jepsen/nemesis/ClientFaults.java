package io.leasehold.jepsen.nemesis;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A slow network between the SDK clients and the cluster: while on, each Renew and Release leaves
 * the client after a random delay of up to {@code maxDelayMillis}. The SDK times validity from when
 * it handed the call over, so this must never make a client overestimate its lease; it does make
 * renewals land right at the leader's expiry deadline, racing the Expire proposal.
 */
public final class ClientFaults implements ClientInterceptor {
  private static final ScheduledExecutorService DELAYS =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "jepsen-client-delay");
            t.setDaemon(true);
            return t;
          });
  private volatile long maxDelayMillis;

  public void slow(long maxDelayMillis) {
    this.maxDelayMillis = maxDelayMillis;
  }

  public void heal() {
    this.maxDelayMillis = 0;
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(
      MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    long max = maxDelayMillis;
    String m = method.getFullMethodName();
    if (max <= 0 || !(m.endsWith("/Renew") || m.endsWith("/Release"))) {
      return next.newCall(method, options);
    }
    return new Delayed<>(
        next.newCall(method, options), ThreadLocalRandom.current().nextLong(max + 1));
  }

  /** Holds every step of a call and replays them in order once the delay has passed. */
  private static final class Delayed<Q, R> extends ClientCall<Q, R> {
    private final ClientCall<Q, R> delegate;
    private final List<Runnable> held = new ArrayList<>();
    private boolean released;

    Delayed(ClientCall<Q, R> delegate, long delayMillis) {
      this.delegate = delegate;
      DELAYS.schedule(this::release, delayMillis, TimeUnit.MILLISECONDS);
    }

    private void release() {
      List<Runnable> steps;
      synchronized (this) {
        released = true;
        steps = new ArrayList<>(held);
        held.clear();
      }
      steps.forEach(Runnable::run);
    }

    private void step(Runnable r) {
      synchronized (this) {
        if (!released) {
          held.add(r);
          return;
        }
      }
      r.run();
    }

    @Override
    public void start(Listener<R> listener, Metadata headers) {
      step(() -> delegate.start(listener, headers));
    }

    @Override
    public void request(int n) {
      step(() -> delegate.request(n));
    }

    @Override
    public void cancel(String message, Throwable cause) {
      step(() -> delegate.cancel(message, cause));
    }

    @Override
    public void halfClose() {
      step(delegate::halfClose);
    }

    @Override
    public void sendMessage(Q message) {
      step(() -> delegate.sendMessage(message));
    }
  }
}
