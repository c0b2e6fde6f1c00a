package io.leasehold.cli;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Waits for a future and throws its failure itself, not a wrapper, so errors read as the SDK wrote
 * them.
 */
public final class Await {
  private Await() {}

  public static <T> T of(CompletableFuture<T> f) {
    try {
      return f.join();
    } catch (CompletionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(cause.toString(), cause);
    } catch (CancellationException e) {
      throw e;
    }
  }
}
