package io.leasehold.cli;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Lets a long-running command end cleanly on Ctrl-C or SIGTERM: the JVM's shutdown interrupts the
 * command's thread and waits (bounded) for the command to finish its cleanup (release a lease, stop
 * a child process). Tests end such a command the same way, by interrupting its thread.
 */
public final class UntilInterrupted implements AutoCloseable {
  private final CountDownLatch done = new CountDownLatch(1);
  private final Thread hook;

  private UntilInterrupted(Duration cleanup) {
    Thread command = Thread.currentThread();
    this.hook =
        new Thread(
            () -> {
              command.interrupt();
              try {
                done.await(cleanup.toMillis(), TimeUnit.MILLISECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "leasehold-interrupt");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /**
   * From now until {@link #close()}, shutting down interrupts the calling thread and waits up to
   * {@code cleanup} for it.
   */
  public static UntilInterrupted install(Duration cleanup) {
    return new UntilInterrupted(cleanup);
  }

  @Override
  public void close() {
    done.countDown();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook is running: it sees done and returns
    }
  }
}
