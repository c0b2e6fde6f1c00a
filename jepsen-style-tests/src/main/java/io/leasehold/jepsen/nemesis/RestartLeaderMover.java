package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.cluster.NodeProcess;

/** Forces a leader change the hard way: kill -9 the leader and start it again at once. */
public final class RestartLeaderMover implements LeadershipMover {
  @Override
  public String move(NemesisContext ctx, int leader) {
    NodeProcess n = ctx.cluster().node(leader);
    n.kill();
    n.start();
    return "restarted leader " + n.id();
  }

  @Override
  public void settle(NemesisContext ctx) {
    ctx.cluster().nodes().forEach(NodeProcess::start);
  }
}
