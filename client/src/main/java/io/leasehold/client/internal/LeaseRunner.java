package io.leasehold.client.internal;

import io.leasehold.client.ClientClosedException;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseAction;
import io.leasehold.client.LeaseListener;
import io.leasehold.client.LeaseLostException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs an action on the current thread while a lease is held: the thread is interrupted if the
 * lease ends under it (lost, or released by the client's close), and the lease is released
 * afterwards.
 */
public final class LeaseRunner {
  private LeaseRunner() {}

  /**
   * @throws LeaseLostException if the lease was not valid at the start or ended while the action
   *     ran (the action's own failure, if any, is its cause)
   * @throws Exception what the action threw, if the lease stayed held
   */
  public static <T> T run(Lease lease, LeaseAction<T> action) throws Exception {
    Thread runner = Thread.currentThread();
    Object guard = new Object();
    boolean[] running = {true};
    boolean[] interrupted = {false};
    LeaseListener onEnd =
        t -> {
          if (t.to().isFinal()) {
            synchronized (guard) {
              // Only while the action runs: never leave a stray interrupt on the caller's thread.
              if (running[0]) {
                interrupted[0] = true;
                runner.interrupt();
              }
            }
          }
        };
    lease.addListener(onEnd);
    T value = null;
    Exception failure = null;
    try {
      if (!lease.isValid()) {
        throw new LeaseLostException(
            "lease "
                + lease.name()
                + " (token "
                + lease.token()
                + ") was not valid when the action was to start");
      }
      value = action.run(lease);
    } catch (Exception e) {
      failure = e;
    } finally {
      synchronized (guard) {
        running[0] = false;
      }
      lease.removeListener(onEnd);
    }
    boolean ended = interrupted[0] || !lease.isValid();
    if (interrupted[0]) {
      Thread.interrupted(); // the interrupt was ours, to stop the action; it has stopped
    }
    lease.close();
    if (ended) {
      if (failure instanceof LeaseLostException lost) {
        throw lost;
      }
      throw new LeaseLostException(
          "lease "
              + lease.name()
              + " (token "
              + lease.token()
              + ") ended while the action ran: "
              + lease.state()
              + lease.lossReason().map(r -> " (" + r + ")").orElse(""),
          failure);
    }
    if (failure != null) {
      throw failure;
    }
    return value;
  }

  /**
   * Once {@code acquired} completes, runs {@code action} on one of the client's action threads
   * while the lease is held ({@link #run}) and completes with its result. Cancelling the returned
   * future stops the acquisition, or interrupts the running action.
   */
  public static <T> CompletableFuture<T> whileHeld(
      ClientCore core, String name, CompletableFuture<Lease> acquired, LeaseAction<T> action) {
    CompletableFuture<T> out = new CompletableFuture<>();
    AtomicReference<Thread> runner = new AtomicReference<>();
    acquired.whenComplete(
        (lease, error) -> {
          if (error != null) {
            out.completeExceptionally(Futures.unwrap(error));
            return;
          }
          try {
            core.actions()
                .execute(
                    () -> {
                      runner.set(Thread.currentThread());
                      try {
                        if (!out.isDone()) {
                          out.complete(run(lease, action));
                        }
                      } catch (Throwable t) {
                        out.completeExceptionally(t);
                      } finally {
                        runner.set(null);
                        lease.close();
                        Thread.interrupted();
                      }
                    });
          } catch (RejectedExecutionException | IllegalStateException closed) {
            lease.close();
            out.completeExceptionally(
                new ClientClosedException("withLease " + name + ": the client is closed"));
          }
        });
    out.whenComplete(
        (v, e) -> {
          if (out.isCancelled()) {
            acquired.cancel(true);
            Thread t = runner.get();
            if (t != null) {
              t.interrupt();
            }
          }
        });
    return out;
  }
}
