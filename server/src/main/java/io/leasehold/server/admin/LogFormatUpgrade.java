package io.leasehold.server.admin;

import io.leasehold.statemachine.core.LogFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Raises the cluster's log format ({@link LogFormat}) once every member can apply the newer one, as
 * etcd raises its cluster version: the leader asks each member which format its code applies and,
 * when all answer the newest, proposes {@code SetLogFormat}. Until then entries stay in the older
 * format, which every member applies alike, so a rolling upgrade never splits the replicas. A
 * member that predates the question refuses it and counts as older; the leader asks again every
 * {@link #RETRY} while it leads.
 *
 * <p>The format only rises: once raised, a node whose code predates it must not rejoin (it would
 * apply later entries differently). docs/operations.md, "Upgrade", says so.
 */
public final class LogFormatUpgrade implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LogFormatUpgrade.class);
  static final Duration RETRY = Duration.ofSeconds(10);

  /** What the upgrade needs from the node. */
  public interface Cluster {
    /** The format in force in this node's applied state. */
    int currentFormat();

    boolean isLeader();

    /** The members of the current configuration other than this node. */
    List<String> otherMembers();

    /**
     * The newest format {@code member}'s code applies; fails if it cannot say (older code,
     * unreachable).
     */
    CompletableFuture<Integer> newestFormatOf(String member);

    /** Proposes raising the format to {@code format}, as this leader. */
    CompletableFuture<?> propose(int format);
  }

  private final Cluster cluster;
  private final ScheduledExecutorService timer;
  private final AtomicLong generation = new AtomicLong();
  private final Duration retry;

  /** The last set of older members logged, so a cluster mid-upgrade logs once, not every retry. */
  private volatile String lastLogged = "";

  public LogFormatUpgrade(Cluster cluster) {
    this(cluster, RETRY);
  }

  LogFormatUpgrade(Cluster cluster, Duration retry) {
    this.cluster = cluster;
    this.retry = retry;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "leasehold-log-format");
              t.setDaemon(true);
              return t;
            });
  }

  /** This node leads and has applied its term's first entry: check now. */
  public void promote() {
    long gen = generation.incrementAndGet();
    schedule(gen, Duration.ZERO);
  }

  /** This node no longer leads: stop checking. */
  public void demote() {
    generation.incrementAndGet();
  }

  private void schedule(long gen, Duration delay) {
    try {
      timer.schedule(() -> check(gen), delay.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closed) {
      // closing
    }
  }

  private void check(long gen) {
    if (gen != generation.get()
        || !cluster.isLeader()
        || cluster.currentFormat() >= LogFormat.NEWEST) {
      return;
    }
    List<String> members = cluster.otherMembers();
    List<CompletableFuture<Integer>> answers = new ArrayList<>();
    for (String m : members) {
      answers.add(
          cluster.newestFormatOf(m).handle((f, e) -> e == null ? f : 0).toCompletableFuture());
    }
    CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
        .whenComplete(
            (v, e) -> {
              List<String> older = new ArrayList<>();
              for (int i = 0; i < members.size(); i++) {
                int f = answers.get(i).join();
                if (f < LogFormat.NEWEST) {
                  older.add(members.get(i) + (f == 0 ? " (no answer)" : " (format " + f + ")"));
                }
              }
              if (gen != generation.get()) {
                return;
              }
              if (!older.isEmpty()) {
                String text = String.join(", ", older);
                if (!text.equals(lastLogged)) {
                  lastLogged = text;
                  LOG.info(
                      "log format stays {} until every member applies format {}: {}",
                      cluster.currentFormat(),
                      LogFormat.NEWEST,
                      text);
                }
                schedule(gen, retry);
                return;
              }
              cluster
                  .propose(LogFormat.NEWEST)
                  .whenComplete(
                      (r, failed) -> {
                        if (failed != null) {
                          LOG.info(
                              "raising the log format to {} failed ({}); trying again in {} s",
                              LogFormat.NEWEST,
                              failed.toString(),
                              retry.toSeconds());
                          schedule(gen, retry);
                        } else {
                          LOG.info(
                              "log format raised to {}: every member applies it", LogFormat.NEWEST);
                        }
                      });
            });
  }

  @Override
  public void close() {
    generation.incrementAndGet();
    timer.shutdownNow();
  }
}
