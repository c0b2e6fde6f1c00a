package io.leasehold.client.internal;

import io.leasehold.client.AcquireResult;
import io.leasehold.client.Granted;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

/** How an acquisition's outcome reaches its caller. */
public final class Deliveries {
  private Deliveries() {}

  /**
   * Hands {@code source}'s result to the caller on the callback executor. A lease granted to a
   * caller that has stopped waiting (cancelled the future) is released, never leaked; cancelling
   * the caller's future cancels the acquisition.
   */
  public static <T> CompletableFuture<T> deliver(
      ClientCore core, CompletableFuture<AcquireResult> source, Function<AcquireResult, T> map) {
    CompletableFuture<T> out = new CompletableFuture<>();
    source.whenComplete(
        (result, error) -> {
          Runnable hand =
              () -> {
                if (error != null) {
                  out.completeExceptionally(Futures.unwrap(error));
                  return;
                }
                if (!out.complete(map.apply(result))) {
                  if (result instanceof Granted g) {
                    try {
                      g.lease().release();
                    } catch (IllegalStateException alreadyReleased) {
                      // nothing to give back
                    }
                  }
                }
              };
          try {
            core.callbackExecutor().execute(hand);
          } catch (RejectedExecutionException shutDown) {
            hand.run();
          }
        });
    out.whenComplete(
        (v, e) -> {
          if (out.isCancelled()) {
            source.cancel(true);
          }
        });
    return out;
  }
}
