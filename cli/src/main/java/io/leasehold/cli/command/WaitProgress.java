package io.leasehold.cli.command;

import io.leasehold.cli.Human;
import io.leasehold.client.Conflict;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.Rejection;
import java.io.PrintWriter;
import java.util.Optional;

/**
 * What a waiting {@code lock} shows on stderr: who holds the name and for how long. On a terminal
 * one line is rewritten in place every second; otherwise a line is printed when the holder changes.
 */
final class WaitProgress {
  private final PrintWriter err;
  private final String name;
  private final boolean terminal;
  private final long startNanos = System.nanoTime();
  private String lastHolder;
  private boolean open;

  WaitProgress(PrintWriter err, String name, boolean terminal) {
    this.err = err;
    this.name = name;
    this.terminal = terminal;
  }

  synchronized void show(Conflict c) {
    show(c.holder(), c.token(), Human.duration(c.remaining()));
  }

  synchronized void show(Rejection r) {
    line("waiting for " + name + ": lock-delay after its last lease, " + r.retryAfter().map(Human::duration).orElse("?") + " left", "lock-delay");
  }

  synchronized void show(Optional<LeaseInfo> lease) {
    lease.ifPresentOrElse(l -> show(l.holder(), l.token(), Human.duration(l.remaining())),
        () -> line("waiting for " + name + ": free, acquiring", "free"));
  }

  private void show(String holder, long token, String remaining) {
    line("waiting for " + name + ": held by " + holder + " (token " + token + "), expires in " + remaining, holder + "/" + token);
  }

  private void line(String text, String who) {
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
    err.println("acquired " + name + " (token " + token + ") after " + Human.duration(java.time.Duration.ofNanos(System.nanoTime() - startNanos)));
    err.flush();
  }

  synchronized void end() {
    if (open) {
      err.println();
      open = false;
    }
    err.flush();
  }
}
