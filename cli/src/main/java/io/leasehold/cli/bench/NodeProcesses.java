package io.leasehold.cli.bench;

import io.leasehold.server.LoopbackPorts;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the clusters a benchmark starts itself (Leasehold's and etcd's) share: ports and processes.
 */
public final class NodeProcesses {
  private NodeProcesses() {}

  /**
   * {@code n} distinct free loopback ports, below the kernel's ephemeral range ({@link
   * LoopbackPorts}): a node process binds them only once its JVM has started.
   */
  public static int[] freeLoopbackPorts(int n) throws IOException {
    return LoopbackPorts.free(n);
  }

  /** {@code 127.0.0.1:port} for each port. */
  public static List<String> loopbackAddresses(int[] ports) {
    List<String> e = new ArrayList<>();
    for (int p : ports) {
      e.add("127.0.0.1:" + p);
    }
    return e;
  }

  /** SIGKILL, then wait (briefly) for the process to be gone. */
  public static void kill(Process p) throws InterruptedException {
    p.destroyForcibly();
    p.waitFor(10, TimeUnit.SECONDS);
  }

  /** SIGTERM to every process (a clean stop), then SIGKILL to any still running after 15 s. */
  public static void stopAll(Process[] processes) {
    for (Process p : processes) {
      if (p != null && p.isAlive()) {
        p.destroy();
      }
    }
    for (Process p : processes) {
      if (p != null) {
        try {
          if (!p.waitFor(15, TimeUnit.SECONDS)) {
            p.destroyForcibly();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          p.destroyForcibly();
        }
      }
    }
  }
}
