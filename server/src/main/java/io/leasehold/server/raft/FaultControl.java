package io.leasehold.server.raft;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets the fault tests drive a node process's {@link PeerTraffic} ({@code leasehold server
 * --fault-control FILE}, a hidden option): the node reads the file every 50 ms and applies the rule
 * its one line names, once per change. Never for production.
 *
 * <ul>
 *   <li>{@code delay PEER MIN_MS MAX_MS SEED}: hold every AppendEntries from {@code PEER} for a
 *       random time in the range ({@link PeerTraffic#delay});
 *   <li>{@code none}, an empty file or no file: deliver everything at once.
 * </ul>
 */
public final class FaultControl implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FaultControl.class);

  private final Path file;
  private final PeerTraffic traffic;
  private final ScheduledExecutorService poller =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "leasehold-fault-control");
            t.setDaemon(true);
            return t;
          });
  private String applied = "none";

  public FaultControl(Path file, PeerTraffic traffic) {
    this.file = file;
    this.traffic = traffic;
    poller.scheduleWithFixedDelay(this::poll, 0, 50, TimeUnit.MILLISECONDS);
  }

  private void poll() {
    String line;
    try {
      line = Files.readString(file).strip();
    } catch (NoSuchFileException e) {
      line = "none";
    } catch (IOException e) {
      return; // being written: the next poll reads it
    }
    if (line.isEmpty()) {
      line = "none";
    }
    if (line.equals(applied)) {
      return;
    }
    try {
      apply(line);
      applied = line;
      LOG.info("fault control: {}", line);
    } catch (RuntimeException e) {
      LOG.warn("fault control: cannot apply {}: {}", line, e.getMessage());
      applied = line;
    }
  }

  private void apply(String line) {
    String[] w = line.split("\\s+");
    switch (w[0]) {
      case "none" -> traffic.clear();
      case "delay" -> {
        if (w.length != 5) {
          throw new IllegalArgumentException("expected: delay PEER MIN_MS MAX_MS SEED");
        }
        traffic.delay(
            w[1],
            Duration.ofMillis(Long.parseLong(w[2])),
            Duration.ofMillis(Long.parseLong(w[3])),
            Long.parseLong(w[4]));
      }
      default -> throw new IllegalArgumentException("unknown rule " + w[0] + " (delay or none)");
    }
  }

  @Override
  public void close() {
    poller.shutdownNow();
    traffic.clear();
  }
}
