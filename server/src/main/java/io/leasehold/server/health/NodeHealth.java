package io.leasehold.server.health;

import io.grpc.BindableService;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import io.leasehold.server.raft.Consensus;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The standard gRPC health service ({@code grpc.health.v1.Health}) for a node, re-judged every
 * {@link #CHECK_INTERVAL}. A node is SERVING only when it knows a leader it is in touch with and
 * has applied what was committed: a follower heard from the leader within the election timeout; a
 * leader is ready and heard from a majority within it; and the applied index has reached the commit
 * index seen at the previous check (a node applying steadily under load lags the current one by a
 * few entries and must not flap; a node catching up lags by far more).
 */
public final class NodeHealth implements AutoCloseable {
  public static final Duration CHECK_INTERVAL = Duration.ofMillis(200);

  private final HealthStatusManager manager = new HealthStatusManager();
  private final Supplier<Consensus.Liveness> liveness;
  private final long contactMillis;
  private final List<String> services;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "leasehold-health");
            t.setDaemon(true);
            return t;
          });
  private long previousCommit = Long.MAX_VALUE;
  private volatile boolean serving;
  private volatile boolean closed;

  /**
   * @param services the gRPC service names to report besides the server as a whole ("")
   * @param contactTimeout how recently the leader (or, for a leader, a majority) must have been
   *     heard from
   */
  public NodeHealth(
      Supplier<Consensus.Liveness> liveness, Duration contactTimeout, List<String> services) {
    this.liveness = liveness;
    this.contactMillis = contactTimeout.toMillis();
    this.services = List.copyOf(services);
    publish(false);
  }

  public void start() {
    timer.scheduleWithFixedDelay(this::check, 0, CHECK_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The service to add to the node's gRPC server. */
  public BindableService service() {
    return manager.getHealthService();
  }

  public boolean serving() {
    return serving;
  }

  /** Checks now, on the health thread, instead of at the next interval; completes once it has. */
  public CompletableFuture<Void> recheck() {
    try {
      return CompletableFuture.runAsync(this::check, timer);
    } catch (RejectedExecutionException closing) {
      return CompletableFuture.completedFuture(null);
    }
  }

  private void check() {
    boolean ok;
    try {
      ok = !closed && judge(liveness.get());
    } catch (RuntimeException e) {
      ok = false;
    }
    if (ok != serving) {
      publish(ok);
    }
  }

  private synchronized boolean judge(Consensus.Liveness l) {
    long commit = l.commitIndex();
    long applied = l.appliedIndex();
    boolean caughtUp = applied >= Math.min(commit, previousCommit);
    previousCommit = commit;
    if (!l.alive() || l.leaderId().isEmpty() || !caughtUp) {
      return false;
    }
    if (l.role() == Consensus.Role.LEADER) {
      if (!l.leaderReady() || l.followers().isEmpty()) {
        return false;
      }
      int members = l.groupSize();
      long heard =
          1
              + l.followers().get().stream()
                  .mapToLong(Consensus.Follower::lastContactMillis)
                  .filter(ms -> ms <= contactMillis)
                  .count();
      return heard > members / 2;
    }
    return l.role() == Consensus.Role.FOLLOWER
        && l.leaderContactMillis().isPresent()
        && l.leaderContactMillis().getAsLong() <= contactMillis;
  }

  private void publish(boolean ok) {
    serving = ok;
    ServingStatus status = ok ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    manager.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, status);
    for (String s : services) {
      manager.setStatus(s, status);
    }
  }

  @Override
  public void close() {
    closed = true;
    timer.shutdownNow();
    publish(false);
    manager.enterTerminalState();
  }
}
