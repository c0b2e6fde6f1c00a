package io.leasehold.cli.command;

import io.leasehold.cli.CliFailure;
import io.leasehold.cli.Human;
import io.leasehold.client.AcquireResult;
import io.leasehold.client.AcquireTimeoutException;
import io.leasehold.client.Conflict;
import io.leasehold.client.Granted;
import io.leasehold.client.Lease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseOptions;
import io.leasehold.client.LeaseholdClient;
import io.leasehold.client.RejectReason;
import io.leasehold.client.Rejected;
import io.leasehold.client.Rejection;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What a command waiting for a name ({@code lock}, {@code lease acquire --wait}) shows on stderr:
 * who holds the name and for how long. On a terminal one line is rewritten in place every second;
 * otherwise a line is printed when the holder changes.
 */
public final class WaitProgress {
  private final PrintWriter err;
  private final String name;
  private final boolean terminal;
  private final long startNanos = System.nanoTime();
  private String lastHolder;
  private boolean open;
  private boolean ended;

  WaitProgress(PrintWriter err, String name, boolean terminal) {
    this.err = err;
    this.name = name;
    this.terminal = terminal;
  }

  /**
   * Acquires {@code name}, waiting while another holder has it (up to {@code wait}; as long as it
   * takes if null) and showing who holds it on {@code err}. A policy refusal fails at once, except
   * a lock-delay, which is waited out. Failures are {@link CliFailure}s worded for the command
   * line.
   */
  public static Lease acquire(
      LeaseholdClient client, String name, LeaseOptions options, Duration wait, PrintWriter err)
      throws InterruptedException {
    AcquireResult first = client.blocking().tryAcquire(name, options);
    if (first instanceof Granted g) {
      return g.lease();
    }
    if (first instanceof Rejected r && r.rejection().reason() != RejectReason.LOCK_DELAY) {
      throw rejected(name, r.rejection());
    }
    WaitProgress progress = new WaitProgress(err, name, stderrIsTerminal());
    if (first instanceof Conflict c) {
      progress.show(c);
    } else if (first instanceof Rejected r) {
      progress.show(r.rejection());
    }
    CompletableFuture<Lease> acquired =
        client.acquire(name, wait == null ? options : options.withWait(wait));
    CompletableFuture<?> refresh = CompletableFuture.completedFuture(null);
    try {
      while (true) {
        try {
          Lease lease = acquired.get(1, TimeUnit.SECONDS);
          progress.acquired(lease.token());
          return lease;
        } catch (TimeoutException stillWaiting) {
          if (refresh.isDone()) {
            refresh = client.get(name).thenAccept(progress::show);
          }
        } catch (ExecutionException e) {
          progress.end();
          if (e.getCause() instanceof AcquireTimeoutException t) {
            // The SDK words it in milliseconds ("3000 ms"); every other duration the CLI prints
            // reads "3s".
            throw CliFailure.failed(
                name
                    + ": not acquired within "
                    + Human.duration(wait)
                    + t.lastConflict()
                        .map(c -> "; held by " + c.holder() + " (token " + c.token() + ")")
                        .orElse(""));
          }
          throw e.getCause() instanceof RuntimeException r
              ? r
              : new IllegalStateException(e.getCause());
        }
      }
    } catch (InterruptedException e) {
      acquired.cancel(true);
      progress.end();
      throw e;
    }
  }

  public static CliFailure rejected(String name, Rejection r) {
    return CliFailure.failed(name + ": rejected by policy (" + r.reason() + "): " + r.message());
  }

  /**
   * Whether stderr, where progress goes, is a terminal. {@code System.console()} tells only about
   * stdin and stdout, so with {@code 2>log} on a terminal the log filled with escape codes, and
   * with {@code >out} a terminal got a line per holder. Linux says where fd 2 points; elsewhere the
   * console is the best guess there is.
   */
  static boolean stderrIsTerminal() {
    try {
      return isTerminal(Files.readSymbolicLink(Path.of("/proc/self/fd/2")));
    } catch (IOException | UnsupportedOperationException | SecurityException noProc) {
      return System.console() != null;
    }
  }

  static boolean isTerminal(Path device) {
    String d = device.toString();
    return d.startsWith("/dev/pts/") || d.startsWith("/dev/tty") || d.equals("/dev/console");
  }

  synchronized void show(Conflict c) {
    show(c.holder(), c.token(), Human.duration(c.remaining()));
  }

  synchronized void show(Rejection r) {
    line(
        "waiting for "
            + name
            + ": lock-delay after its last lease, "
            + r.retryAfter().map(Human::duration).orElse("?")
            + " left",
        "lock-delay");
  }

  synchronized void show(Optional<LeaseInfo> lease) {
    lease.ifPresentOrElse(
        l -> show(l.holder(), l.token(), Human.duration(l.remaining())),
        () -> line("waiting for " + name + ": free, acquiring", "free"));
  }

  private void show(String holder, long token, String remaining) {
    line(
        "waiting for "
            + name
            + ": held by "
            + holder
            + " (token "
            + token
            + "), expires in "
            + remaining,
        holder + "/" + token);
  }

  private void line(String text, String who) {
    if (ended) {
      return; // a refresh that answers after the wait is over must not print a stale "waiting"
    }
    if (terminal) {
      err.print("\r\033[K" + text);
      open = true;
    } else if (!who.equals(lastHolder)) {
      err.println(text);
    }
    lastHolder = who;
    err.flush();
  }

  synchronized void acquired(long token) {
    end();
    err.println(
        "acquired "
            + name
            + " (token "
            + token
            + ") after "
            + Human.duration(Duration.ofNanos(System.nanoTime() - startNanos)));
    err.flush();
  }

  synchronized void end() {
    ended = true;
    if (open) {
      err.println();
      open = false;
    }
    err.flush();
  }
}
