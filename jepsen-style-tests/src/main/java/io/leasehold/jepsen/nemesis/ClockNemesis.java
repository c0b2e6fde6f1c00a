package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.cluster.NodeProcess;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Skews one node's wall clock (the leader half of the time) by up to an hour either way, through
 * libfaketime — a jump when it starts and another back when it heals. The leader stamps its wall
 * clock into commands, so this tests that wall-clock time only ever fills recorded fields.
 */
public final class ClockNemesis implements Nemesis {
  private final Optional<String> unsupported;
  private final List<NodeProcess> skewed = new ArrayList<>();

  public ClockNemesis(Optional<String> unsupported) {
    this.unsupported = unsupported;
  }

  @Override
  public String kind() {
    return "clock";
  }

  @Override
  public String name() {
    return "clock-skew";
  }

  @Override
  public Optional<String> unsupportedReason() {
    return unsupported;
  }

  @Override
  public String start(NemesisContext ctx) {
    boolean leader = ctx.random().nextBoolean();
    NodeProcess n = ctx.cluster().node(leader ? ctx.leader() : ctx.randomNode());
    long magnitude = 5 + ctx.random().nextInt(3600);
    long offset = ctx.random().nextBoolean() ? magnitude : -magnitude;
    n.setClockOffset(offset);
    skewed.add(n);
    return "wall clock of "
        + n.id()
        + (leader ? " (leader)" : "")
        + " jumps "
        + (offset > 0 ? "+" : "")
        + offset
        + " s";
  }

  @Override
  public String heal(NemesisContext ctx) {
    List<String> ids = new ArrayList<>();
    for (NodeProcess n : skewed) {
      n.setClockOffset(0);
      ids.add(n.id());
    }
    skewed.clear();
    return "wall clocks of " + ids + " jump back to real time";
  }
}
