package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.cluster.NodeProcess;
import java.util.ArrayList;
import java.util.List;

/**
 * SIGSTOP the leader or a random node, SIGCONT on heal. Schedules hold it longer than the election
 * timeout and the lease TTL, so the cluster elects another leader and a paused leader wakes up to
 * leases its successor may have expired and granted again.
 */
public final class PauseNemesis implements Nemesis {
  private final boolean leader;
  private final List<NodeProcess> paused = new ArrayList<>();

  public PauseNemesis(boolean leader) {
    this.leader = leader;
  }

  @Override
  public String kind() {
    return "pause";
  }

  @Override
  public String name() {
    return leader ? "pause-leader" : "pause-random";
  }

  @Override
  public String start(NemesisContext ctx) {
    NodeProcess n = ctx.cluster().node(leader ? ctx.leader() : ctx.randomNode());
    n.pause();
    paused.add(n);
    return "SIGSTOP " + n.id() + (leader ? " (leader)" : "");
  }

  @Override
  public String heal(NemesisContext ctx) {
    List<String> ids = new ArrayList<>();
    for (NodeProcess n : paused) {
      n.resume();
      ids.add(n.id());
    }
    paused.clear();
    return "SIGCONT " + ids;
  }
}
