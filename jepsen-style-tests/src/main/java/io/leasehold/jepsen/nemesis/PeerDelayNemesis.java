package io.leasehold.jepsen.nemesis;

import java.util.Optional;

/**
 * Holds the Raft traffic between two specific members, the leader and one follower, in both
 * directions: every AppendEntries (heartbeats too) one of them receives from the other waits a
 * random 0.2–4 s before it reaches Raft, each message on its own draw, a stream's messages in
 * order. So the leader times out appends and resends them on a new stream while the originals are
 * still held, and the follower gets the late original and the resend back to back; a heartbeat
 * overtakes an append, or an append from a deposed leader arrives after the new one's. A partition
 * only drops traffic; this is the reordering a replication bug needs (the server's {@code
 * PeerTraffic}, driven through its hidden {@code --fault-control} file). The third member talks to
 * both at full speed, so the cluster keeps committing meanwhile.
 */
public final class PeerDelayNemesis implements Nemesis {
  static final int MIN_MS = 200;
  static final int MAX_MS = 4000;
  private int a = -1;
  private int b = -1;

  @Override
  public String kind() {
    return "peer-delay";
  }

  @Override
  public String name() {
    return "peer-delay-leader-follower";
  }

  @Override
  public Optional<String> unsupportedReason() {
    return Optional.empty();
  }

  @Override
  public String start(NemesisContext ctx) {
    a = ctx.leader();
    int leader = a;
    b = ctx.shuffledNodes().stream().filter(i -> i != leader).findFirst().orElseThrow();
    String idA = ctx.cluster().node(a).id();
    String idB = ctx.cluster().node(b).id();
    ctx.cluster()
        .faultControl(
            a, "delay " + idB + " " + MIN_MS + " " + MAX_MS + " " + ctx.random().nextLong());
    ctx.cluster()
        .faultControl(
            b, "delay " + idA + " " + MIN_MS + " " + MAX_MS + " " + ctx.random().nextLong());
    return "Raft traffic between "
        + idA
        + " (leader) and "
        + idB
        + " held "
        + MIN_MS
        + "-"
        + MAX_MS
        + " ms a message, both ways";
  }

  @Override
  public String heal(NemesisContext ctx) {
    if (a < 0) {
      return "nothing held";
    }
    ctx.cluster().faultControl(a, "none");
    ctx.cluster().faultControl(b, "none");
    String healed =
        "Raft traffic between "
            + ctx.cluster().node(a).id()
            + " and "
            + ctx.cluster().node(b).id()
            + " delivered at once again";
    a = -1;
    b = -1;
    return healed;
  }
}
