package io.leasehold.jepsen.nemesis;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Cuts links between nodes (never between the clients and a node): isolates the leader, splits a
 * majority from a minority, or makes a bridge — two sides that cannot talk, and one node that talks
 * to both. Needs network namespaces; where there are none, it is skipped with the reason.
 */
public final class PartitionNemesis implements Nemesis {
  public enum Mode {
    ISOLATE_LEADER,
    MAJORITY_MINORITY,
    BRIDGE
  }

  private final Mode mode;
  private final Optional<String> unsupported;

  public PartitionNemesis(Mode mode, Optional<String> unsupported) {
    this.mode = mode;
    this.unsupported = unsupported;
  }

  @Override
  public String kind() {
    return "partition";
  }

  @Override
  public String name() {
    return "partition-" + mode.name().toLowerCase().replace('_', '-');
  }

  @Override
  public Optional<String> unsupportedReason() {
    return unsupported;
  }

  @Override
  public String start(NemesisContext ctx) {
    int n = ctx.cluster().size();
    List<Integer> order = ctx.shuffledNodes();
    List<Integer> a = new ArrayList<>();
    List<Integer> b = new ArrayList<>();
    Optional<Integer> bridge = Optional.empty();
    switch (mode) {
      case ISOLATE_LEADER -> {
        int leader = ctx.leader();
        a.add(leader);
        order.stream().filter(i -> i != leader).forEach(b::add);
      }
      case MAJORITY_MINORITY -> {
        a.addAll(order.subList(0, (n - 1) / 2));
        b.addAll(order.subList((n - 1) / 2, n));
      }
      case BRIDGE -> {
        bridge = Optional.of(order.get(0));
        List<Integer> rest = order.subList(1, n);
        a.addAll(rest.subList(0, rest.size() / 2));
        b.addAll(rest.subList(rest.size() / 2, rest.size()));
      }
    }
    Set<List<Integer>> pairs = new HashSet<>();
    for (int x : a) {
      for (int y : b) {
        pairs.add(List.of(x, y));
      }
    }
    ctx.cluster().network().cut(pairs);
    return "cut "
        + ids(ctx, a)
        + " from "
        + ids(ctx, b)
        + bridge.map(i -> "; " + ctx.cluster().node(i).id() + " bridges both sides").orElse("")
        + (mode == Mode.ISOLATE_LEADER ? " (leader isolated)" : "");
  }

  private static List<String> ids(NemesisContext ctx, List<Integer> nodes) {
    return nodes.stream().map(i -> ctx.cluster().node(i).id()).toList();
  }

  @Override
  public String heal(NemesisContext ctx) {
    ctx.cluster().network().heal();
    return "every link restored";
  }
}
