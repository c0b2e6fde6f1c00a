package io.leasehold.client.internal;

import io.leasehold.client.AcquireAllResult;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.Granted;
import io.leasehold.client.InvalidRequestException;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseLostException;
import io.leasehold.client.LeaseholdException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
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
                if (!out.complete(map.apply(result)) && result instanceof Granted g) {
                  releaseQuietly(g.lease());
                }
              };
          onCallbacks(core.callbackExecutor(), hand);
        });
    out.whenComplete(
        (v, e) -> {
          if (out.isCancelled()) {
            source.cancel(true);
          }
        });
    return out;
  }

  /**
   * The outcome of every name, handed to the caller on the callback executor. A name whose
   * acquisition failed is listed with why; if every name failed, or one failed in an unexpected
   * way, the failure is the result and the leases granted to the others are released. A caller that
   * stopped waiting (cancelled) has every granted lease released.
   *
   * <p>All or nothing: the cluster grants every name in one entry or none, but a granted name can
   * still fail here, lost before it could be handed over (its answer came as its TTL ran out on
   * this client's clock, and the names of one answer are settled one after another). Then none is
   * handed over: the others are given back and fail too, so a caller never holds some of them.
   */
  static CompletableFuture<AcquireAllResult> deliverAll(
      Executor callbacks,
      List<String> names,
      List<CompletableFuture<AcquireResult>> results,
      boolean allOrNothing) {
    CompletableFuture<AcquireAllResult> out = new CompletableFuture<>();
    CompletableFuture.allOf(
            results.stream().map(f -> f.handle((r, e) -> null)).toArray(CompletableFuture[]::new))
        .whenComplete(
            (ignored, never) -> {
              Map<String, Lease> granted = new LinkedHashMap<>();
              Map<String, AcquireResult> refused = new LinkedHashMap<>();
              List<String> skipped = new ArrayList<>();
              Map<String, LeaseholdException> failed = new LinkedHashMap<>();
              Throwable failure = null;
              for (int i = 0; i < names.size(); i++) {
                CompletableFuture<AcquireResult> f = results.get(i);
                try {
                  AcquireResult r = f.join();
                  if (r instanceof Granted g) {
                    granted.put(names.get(i), g.lease());
                  } else {
                    refused.put(names.get(i), r);
                  }
                } catch (CompletionException | CancellationException e) {
                  Throwable cause = Futures.unwrap(e);
                  if (cause instanceof SkippedAcquisition) {
                    skipped.add(names.get(i));
                  } else if (cause instanceof LeaseholdException one
                      && !(cause instanceof InvalidRequestException)) {
                    failed.put(names.get(i), one);
                  } else if (failure == null) {
                    failure = cause;
                  }
                }
              }
              List<Lease> givenBack = new ArrayList<>();
              if (allOrNothing && !granted.isEmpty() && !failed.isEmpty()) {
                String lost = String.join(", ", failed.keySet());
                granted.forEach(
                    (name, lease) ->
                        failed.put(
                            name,
                            new LeaseLostException(
                                name
                                    + ": granted in one entry with "
                                    + lost
                                    + ", which failed before it could be handed over; given"
                                    + " back, as all or nothing hands over every name or none")));
                givenBack.addAll(granted.values());
                granted.clear();
              }
              // Every name failed (the cluster could not be reached, the client closed): the
              // failure is the result. Some did: they are listed, the others stand.
              if (failure == null && !failed.isEmpty() && failed.size() == names.size()) {
                failure = failed.values().iterator().next();
              }
              Throwable error = failure;
              Runnable hand =
                  () -> {
                    boolean delivered =
                        error != null
                            ? out.completeExceptionally(error)
                            : out.complete(new AcquireAllResult(granted, refused, skipped, failed));
                    givenBack.forEach(Deliveries::releaseQuietly);
                    if (error != null || !delivered) {
                      granted.values().forEach(Deliveries::releaseQuietly);
                    }
                  };
              onCallbacks(callbacks, hand);
            });
    out.whenComplete(
        (v, e) -> {
          if (out.isCancelled()) {
            results.forEach(f -> f.cancel(true));
          }
        });
    return out;
  }

  /** Runs {@code hand} on the callback executor, or here once that has shut down. */
  private static void onCallbacks(Executor callbacks, Runnable hand) {
    try {
      callbacks.execute(hand);
    } catch (RejectedExecutionException shutDown) {
      hand.run();
    }
  }

  /** Gives a lease back, if it is not given back already. */
  private static void releaseQuietly(Lease lease) {
    try {
      lease.release();
    } catch (IllegalStateException alreadyReleased) {
      // nothing to give back
    }
  }
}
