package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.run.Pacing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader churn: while active, moves leadership away from whoever leads every few seconds with
 * {@code Cluster/TransferLeadership} (no target: any other member), as an operator does before
 * maintenance. Leases must survive every hand-over: the new leader's expiry ticker starts each
 * lease's clock afresh.
 */
public final class LeaderChurnNemesis implements Nemesis {
  private static final Logger LOG = LoggerFactory.getLogger(LeaderChurnNemesis.class);
  private static final int FIRST_MOVE_ATTEMPTS = 3;
  private final Duration every;
  private final AtomicBoolean active = new AtomicBoolean();
  private final List<String> moves = new ArrayList<>();
  private Thread churner;
  private int lastRunMoves;

  public LeaderChurnNemesis(Duration every) {
    this.every = every;
  }

  @Override
  public String kind() {
    return "leader-churn";
  }

  @Override
  public String name() {
    return "leader-churn";
  }

  @Override
  public String start(NemesisContext ctx) {
    active.set(true);
    String first = firstMove(ctx);
    synchronized (moves) {
      moves.add(first);
    }
    churner =
        new Thread(
            () -> {
              while (active.get()) {
                long next = System.nanoTime() + every.toNanos();
                while (active.get() && System.nanoTime() - next < 0) {
                  Pacing.sleep(Duration.ofMillis(100));
                }
                if (!active.get()) {
                  return;
                }
                try {
                  String m = transfer(ctx);
                  synchronized (moves) {
                    moves.add(m);
                  }
                } catch (RuntimeException e) {
                  LOG.info(
                      "leader churn: no move this time: {}",
                      e.getMessage().lines().findFirst().orElse(""));
                }
              }
            },
            "jepsen-leader-churn");
    churner.setDaemon(true);
    churner.start();
    return "every " + every.toSeconds() + " s: " + first + " …";
  }

  /**
   * The first hand-over, tried a few times: right after another fault a transfer can time out (the
   * target still catching up), and the fault counts only once leadership has moved.
   */
  private String firstMove(NemesisContext ctx) {
    RuntimeException last = null;
    for (int attempt = 1; attempt <= FIRST_MOVE_ATTEMPTS; attempt++) {
      try {
        return transfer(ctx);
      } catch (RuntimeException e) {
        last = e;
        LOG.info(
            "leader churn: first move failed (attempt {} of {}): {}",
            attempt,
            FIRST_MOVE_ATTEMPTS,
            String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
        Pacing.sleep(Duration.ofSeconds(1));
      }
    }
    active.set(false);
    throw last;
  }

  private static String transfer(NemesisContext ctx) {
    int leader = ctx.leader();
    return ctx.cluster().node(leader).id()
        + "->"
        + ClusterCalls.transferLeadershipFrom(ctx, leader);
  }

  /** How many times leadership was moved while the last fault was in force. */
  public int lastRunMoves() {
    synchronized (moves) {
      return lastRunMoves;
    }
  }

  @Override
  public String heal(NemesisContext ctx) {
    active.set(false);
    if (churner != null) {
      try {
        churner.join(60_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    synchronized (moves) {
      String done = "churn stopped after " + moves.size() + " moves: " + moves;
      lastRunMoves = moves.size();
      moves.clear();
      return done;
    }
  }
}
