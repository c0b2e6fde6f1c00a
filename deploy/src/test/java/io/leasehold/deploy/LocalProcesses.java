package io.leasehold.deploy;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What the tests that start nodes on this machine share: free ports, and stopping what they started. */
final class LocalProcesses {
  private LocalProcesses() {}

  /** A port free on every interface now (bound and released at once). */
  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
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
