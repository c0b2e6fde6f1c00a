package io.leasehold.cli.bench;

import java.io.OutputStream;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A line on a terminal that says where a run is, rewritten once a second: the phase, the seconds
 * left, the rate of the last second and the percentiles so far. Silent when the output is not a
 * terminal, so piped JSON stays clean.
 */
public final class Progress {
  private final PrintWriter out;
  private final String label;
  private final boolean enabled;
  private Thread ticker;
  private volatile boolean stopped;

  public Progress(PrintWriter out, String label, boolean enabled) {
    this.out = out;
    this.label = label;
    this.enabled = enabled;
  }

  /** On when stdout and stdin are a terminal, as {@link System#console()} says. */
  public static Progress onTerminal(PrintWriter err, String label) {
    return new Progress(err, label, System.console() != null);
  }

  public static Progress off() {
    return new Progress(new PrintWriter(OutputStream.nullOutputStream()), "", false);
  }

  /** A progress line of its own for a step of a run (the same terminal, another label). */
  public Progress step(String stepLabel) {
    return new Progress(out, stepLabel, enabled);
  }

  void start(long startNanos, long measureFrom, long end, AtomicLong completed, Latency latency) {
    if (!enabled) {
      return;
    }
    stopped = false;
    ticker =
        new Thread(
            () -> {
              long last = 0;
              while (!stopped) {
                try {
                  Thread.sleep(1_000);
                } catch (InterruptedException e) {
                  return;
                }
                long now = System.nanoTime();
                long done = completed.get();
                String phase = now < measureFrom ? "warm-up" : "measuring";
                long left = Math.max(0, (end - now) / 1_000_000_000L);
                line(
                    String.format(
                        Locale.ROOT,
                        "%s: %s, %ds left, %,d ops/s, %s",
                        label,
                        phase,
                        left,
                        now < measureFrom ? 0 : done - last,
                        latency.percentiles().brief()));
                last = done;
              }
            },
            "bench-progress");
    ticker.setDaemon(true);
    ticker.start();
  }

  /** Shows a one-off status (e.g. "acquiring 10,000 leases: 4,200"). */
  public void line(String text) {
    if (enabled) {
      out.print("\r\033[K" + text);
      out.flush();
    }
  }

  void stop() {
    stopped = true;
    if (ticker != null) {
      ticker.interrupt();
    }
    clear();
  }

  public void clear() {
    if (enabled) {
      out.print("\r\033[K");
      out.flush();
    }
  }
}
