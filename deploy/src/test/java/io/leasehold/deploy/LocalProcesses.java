package io.leasehold.deploy;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the tests that start nodes on this machine share: free ports, and stopping what they
 * started.
 */
final class LocalProcesses {
  private LocalProcesses() {}

  /** A port free on every interface now, below the ephemeral range (the fault suite's rule). */
  static int freePort() throws IOException {
    return io.leasehold.jepsen.cluster.FreePorts.next();
  }

  /** SIGTERM to every process, then up to 30 s each to exit before SIGKILL. */
  static void stopAll(List<Process> processes) throws InterruptedException {
    for (Process p : processes) {
      p.destroy();
    }
    for (Process p : processes) {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }
}
