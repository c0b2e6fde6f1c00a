package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.cluster.NodeProcess;
import java.util.ArrayList;
import java.util.List;

/** kill -9 the leader or a random node; heal restarts it from its data dir. */
public final class KillNemesis implements Nemesis {
  private final boolean leader;
  private final List<NodeProcess> killed = new ArrayList<>();

  public KillNemesis(boolean leader) {
    this.leader = leader;
  }

  @Override
  public String kind() {
    return "kill";
  }

  @Override
  public String name() {
    return leader ? "kill-leader" : "kill-random";
  }

  @Override
  public String start(NemesisContext ctx) {
    NodeProcess n = ctx.cluster().node(leader ? ctx.leader() : ctx.randomNode());
    n.kill();
    killed.add(n);
    return "kill -9 " + n.id() + (leader ? " (leader)" : "");
  }

  @Override
  public String heal(NemesisContext ctx) {
    List<String> ids = new ArrayList<>();
    for (NodeProcess n : killed) {
      n.start();
      ids.add(n.id());
    }
    killed.clear();
    return "restarted " + ids + " from their data dirs";
  }
}
