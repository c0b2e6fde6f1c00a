package io.leasehold.server.ui;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;

/**
 * One call of a gRPC service handler made in-process: the dashboard reads through the very handlers
 * the API serves (validation, linearizable or stale read, mapping), not around them.
 */
final class UnaryCall<T> implements StreamObserver<T> {
  private final CompletableFuture<T> result = new CompletableFuture<>();

  static <Q, T> T call(BiConsumer<Q, StreamObserver<T>> handler, Q request, Duration timeout)
      throws UiException {
    UnaryCall<T> call = new UnaryCall<>();
    try {
      handler.accept(request, call);
      return call.result.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw UiException.of(Status.fromThrowable(e.getCause()));
    } catch (TimeoutException e) {
      throw UiException.of(Status.DEADLINE_EXCEEDED.withDescription("no answer within " + timeout));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw UiException.of(Status.CANCELLED.withDescription("interrupted"));
    } catch (RuntimeException e) {
      throw UiException.of(Status.fromThrowable(e));
    }
  }

  @Override
  public void onNext(T value) {
    result.complete(value);
  }

  @Override
  public void onError(Throwable t) {
    result.completeExceptionally(t);
  }

  @Override
  public void onCompleted() {
    result.completeExceptionally(new IllegalStateException("completed without a reply"));
  }
}
