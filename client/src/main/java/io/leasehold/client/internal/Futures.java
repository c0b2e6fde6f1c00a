package io.leasehold.client.internal;

import io.leasehold.client.LeaseholdException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/** Small helpers for the futures the SDK hands out. */
public final class Futures {
  private Futures() {}

  /**
   * A future completed with {@code source}'s result on {@code executor}, so the caller's dependent
   * stages never run on a gRPC or internal thread. Cancelling it cancels {@code source}.
   */
  public static <T> CompletableFuture<T> on(Executor executor, CompletableFuture<T> source) {
    CompletableFuture<T> out = new CompletableFuture<>();
    source.whenComplete(
        (value, error) -> {
          try {
            executor.execute(() -> complete(out, value, error));
          } catch (RejectedExecutionException shutDown) {
            complete(out, value, error);
          }
        });
    out.whenComplete(
        (value, error) -> {
          if (out.isCancelled()) {
            source.cancel(true);
          }
        });
    return out;
  }

  private static <T> void complete(CompletableFuture<T> out, T value, Throwable error) {
    if (error != null) {
      out.completeExceptionally(unwrap(error));
    } else {
      out.complete(value);
    }
  }

  public static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException)
        && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  /** Waits uninterruptibly; rethrows the failure itself rather than a wrapper. */
  public static <T> T join(CompletableFuture<T> f) {
    try {
      return f.join();
    } catch (CompletionException | CancellationException e) {
      throw rethrow(e);
    }
  }

  /**
   * Waits; on interruption cancels {@code f} and rethrows (the interrupt stays consumed, as {@code
   * get} does).
   */
  public static <T> T get(CompletableFuture<T> f) throws InterruptedException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      f.cancel(true);
      throw e;
    } catch (ExecutionException | CancellationException e) {
      throw rethrow(e);
    }
  }

  private static RuntimeException rethrow(Exception e) {
    if (e instanceof CancellationException c) {
      return c;
    }
    Throwable cause = unwrap(e);
    if (cause instanceof RuntimeException r) {
      return r;
    }
    if (cause instanceof Error err) {
      throw err;
    }
    return new LeaseholdException(String.valueOf(cause.getMessage()), cause);
  }
}
