package io.leasehold.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.concurrent.CompletableFuture;

/**
 * Cuts a client off from the cluster while {@link #cut()} is on: every new call fails with
 * UNAVAILABLE, as if the network (or the process) were stopped. Calls already running finish.
 */
final class Partition implements ClientInterceptor {
  private volatile boolean cut;

  void cut() {
    cut = true;
  }

  void heal() {
    cut = false;
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    if (!cut) {
      return next.newCall(method, options);
    }
    return new ClientCall<>() {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        // Like a real transport failure: reported on another thread, never inline.
        CompletableFuture.runAsync(() -> listener.onClose(Status.UNAVAILABLE.withDescription("partitioned by the test"), new Metadata()));
      }

      @Override
      public void request(int numMessages) {
      }

      @Override
      public void cancel(String message, Throwable cause) {
      }

      @Override
      public void halfClose() {
      }

      @Override
      public void sendMessage(Q message) {
      }
    };
  }
}
