package io.leasehold.jepsen.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The worker threads of one workload and the flag that stops them. */
final class Threads {
  private static final Logger LOG = LoggerFactory.getLogger(Threads.class);
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final List<Thread> threads = new ArrayList<>();

  boolean running() {
    return running.get();
  }

  void spawn(String name, Runnable body) {
    Thread t =
        new Thread(
            () -> {
              try {
                body.run();
              } catch (RuntimeException e) {
                LOG.error("workload thread {} died", name, e);
              }
            },
            name);
    t.setDaemon(true);
    threads.add(t);
    t.start();
  }

  void stop() {
    running.set(false);
    for (Thread t : threads) {
      try {
        t.join(30_000);
        if (t.isAlive()) {
          LOG.warn("workload thread {} did not stop within 30 s", t.getName());
          t.interrupt();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
