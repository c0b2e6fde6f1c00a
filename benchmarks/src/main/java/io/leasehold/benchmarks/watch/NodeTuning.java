package io.leasehold.benchmarks.watch;

import io.leasehold.server.NodeConfig;
import java.time.Duration;
import java.util.List;

/**
 * The node settings a benchmark run may override (0: the server's default), in-JVM or in child
 * JVMs.
 */
record NodeTuning(int watchSenders, int watchMessageRate, int watchMaxDelayMs) {
  static final NodeTuning DEFAULTS = new NodeTuning(0, 0, 0);

  void applyTo(NodeConfig.Builder b) {
    if (watchSenders > 0) {
      b.watchSenders(watchSenders);
    }
    if (watchMessageRate > 0) {
      b.watchMessageRate(watchMessageRate);
    }
    if (watchMaxDelayMs > 0) {
      b.watchMaxDelay(Duration.ofMillis(watchMaxDelayMs));
    }
  }

  /** As command-line arguments for a child node JVM ({@link #parse}). */
  List<String> args() {
    return List.of(
        Integer.toString(watchSenders),
        Integer.toString(watchMessageRate),
        Integer.toString(watchMaxDelayMs));
  }

  static NodeTuning parse(String watchSenders, String watchMessageRate, String watchMaxDelayMs) {
    return new NodeTuning(
        Integer.parseInt(watchSenders),
        Integer.parseInt(watchMessageRate),
        Integer.parseInt(watchMaxDelayMs));
  }
}
