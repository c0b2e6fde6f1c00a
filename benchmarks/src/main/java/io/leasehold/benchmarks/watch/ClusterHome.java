package io.leasehold.benchmarks.watch;

import io.leasehold.benchmarks.Dirs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a benchmark cluster owns besides its nodes, wherever they run ({@link BenchCluster} in this
 * JVM, {@link NodeProcesses} one JVM each): a temp directory for their data, the clients' channels,
 * and a shutdown hook, so that an interrupted run still stops its nodes and deletes the directory.
 * {@link #close} does that once: channels first, then the nodes, then the directory.
 */
final class ClusterHome implements AutoCloseable {
  private final Path dir;
  private final ClientChannels clients = new ClientChannels();
  private final Runnable stopNodes;
  private final Thread cleanupHook;
  private boolean closed;

  /** {@code stopNodes}: how the owning cluster stops its nodes; it must not throw. */
  ClusterHome(String hookName, Runnable stopNodes) throws IOException {
    this.dir = Files.createTempDirectory("leasehold-watch-bench-");
    this.stopNodes = stopNodes;
    this.cleanupHook = new Thread(this::close, hookName);
    Runtime.getRuntime().addShutdownHook(cleanupHook);
  }

  Path dir() {
    return dir;
  }

  ClientChannels clients() {
    return clients;
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    clients.close();
    stopNodes.run();
    deleteRecursively(dir);
    if (Thread.currentThread() != cleanupHook) {
      try {
        Runtime.getRuntime().removeShutdownHook(cleanupHook);
      } catch (IllegalStateException shuttingDown) {
        // Already running the hooks.
      }
    }
  }

  private static void deleteRecursively(Path dir) {
    try {
      Dirs.deleteRecursively(dir);
    } catch (IOException e) {
      System.err.println("could not delete " + dir + ": " + e);
    }
  }
}
