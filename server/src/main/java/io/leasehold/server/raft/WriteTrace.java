package io.leasehold.server.raft;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A diagnostic ({@code leasehold server --trace-writes FILE}): one line a step of each log entry's
 * way through this node, {@code <node> <step> <index> <nanos>}, so that the files of a cluster's
 * nodes, merged, show where a write's time goes (docs/performance.md, "Where a write's time goes").
 * The steps are {@link ReplicationTrace}'s and {@link CommitClock}'s, and the node's own: a client
 * write proposed ({@code propose}) and answered ({@code answered}), by its entry's index.
 *
 * <p>Times are {@link System#nanoTime}, which on Linux is the system-wide monotonic clock: files of
 * nodes on one host compare directly. Lines go through a bounded queue to a writer thread; when the
 * queue is full a line is dropped and counted, so tracing never blocks a Raft thread.
 */
public final class WriteTrace
    implements ReplicationTrace.Listener, CommitClock.Listener, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WriteTrace.class);
  private static final String END = "";

  private final String node;
  private final BlockingQueue<String> lines = new ArrayBlockingQueue<>(1 << 16);
  private final AtomicLong dropped = new AtomicLong();
  private final Thread writer;

  private WriteTrace(String node, BufferedWriter out) {
    this.node = node;
    this.writer = new Thread(() -> drain(out), "leasehold-write-trace");
    writer.setDaemon(true);
    writer.start();
  }

  /** Starts tracing this node's entries into {@code file} (appended to). */
  public static WriteTrace start(String node, Path file) {
    try {
      return new WriteTrace(
          node,
          Files.newBufferedWriter(
              file, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND));
    } catch (IOException e) {
      throw new UncheckedIOException("trace-writes: cannot open " + file, e);
    }
  }

  private void drain(BufferedWriter out) {
    try (out) {
      while (true) {
        String line = lines.take();
        if (line == END) {
          return;
        }
        out.write(line);
        out.newLine();
        if (lines.isEmpty()) {
          out.flush();
        }
      }
    } catch (IOException e) {
      LOG.warn("write trace stopped: {}", e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  public void record(String step, long index, long nanos) {
    if (!lines.offer(node + " " + step + " " + index + " " + nanos)) {
      dropped.incrementAndGet();
    }
  }

  @Override
  public void appendReceived(long lastIndex, long leaderCommit, long nanos) {
    record("append-received", lastIndex, nanos);
  }

  @Override
  public void commitReceived(long leaderCommit, long nanos) {
    record("commit-received", leaderCommit, nanos);
  }

  @Override
  public void replySent(long matchIndex, long nanos) {
    record("reply-sent", matchIndex, nanos);
  }

  @Override
  public void applied(long index, long nanos) {
    record("applied", index, nanos);
  }

  @Override
  public void committed(long fromExclusive, long toInclusive, long nanoTime) {
    record("committed", toInclusive, nanoTime);
  }

  @Override
  public void close() {
    lines.offer(END);
    try {
      writer.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (dropped.get() > 0) {
      LOG.warn("write trace dropped {} lines (its queue was full)", dropped.get());
    }
  }
}
