package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.cluster.NodeProcess;
import io.leasehold.jepsen.run.Pacing;
import java.time.Duration;
import java.util.Optional;

/**
 * Forces a leader change by freezing the leader (SIGSTOP) until another node has taken over —
 * at most 10 s — and then thawing it: the old leader rejoins as a follower. Cheaper than a
 * restart on a loaded machine, where a JVM takes long to start.
 */
public final class PauseLeaderMover implements LeadershipMover {
  @Override
  public String move(NemesisContext ctx, int leader) {
    NodeProcess n = ctx.cluster().node(leader);
    n.pause();
    try {
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (System.nanoTime() - deadline < 0) {
        Optional<Integer> now = ctx.cluster().leader();
        if (now.isPresent() && now.get() != leader) {
          return "froze leader " + n.id() + " until " + ctx.cluster().node(now.get()).id() + " took over";
        }
        Pacing.sleep(Duration.ofMillis(200));
      }
      return "froze leader " + n.id() + " for 10 s (no successor seen)";
    } finally {
      n.resume();
    }
  }

  @Override
  public void settle(NemesisContext ctx) {
    ctx.cluster().nodes().forEach(NodeProcess::resume);
  }
}
