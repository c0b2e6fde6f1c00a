package io.leasehold.server;

import io.leasehold.server.api.AcquireWaits;
import io.leasehold.server.metrics.NodeMetrics;
import io.leasehold.server.raft.Consensus;
import io.leasehold.server.watch.WatchHub;
import io.leasehold.statemachine.core.Counters;
import io.leasehold.statemachine.core.LeaseCore;
import io.leasehold.statemachine.ratis.LeaseStateMachine;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What the metrics endpoint reads of a node: the apply loop's counters, the watch hub and the Raft
 * view.
 */
final class NodeMetricsSource implements NodeMetrics.Source {
  private final Supplier<LeaseStateMachine> stateMachine;
  private final WatchHub watchHub;
  private final Supplier<Consensus> consensus;
  private final BooleanSupplier serving;
  private final Path dataDir;
  private final BooleanSupplier divisionClosed;
  private final AcquireWaits acquireWaits;

  NodeMetricsSource(
      Supplier<LeaseStateMachine> stateMachine,
      WatchHub watchHub,
      Supplier<Consensus> consensus,
      BooleanSupplier serving,
      Path dataDir,
      BooleanSupplier divisionClosed,
      AcquireWaits acquireWaits) {
    this.stateMachine = stateMachine;
    this.watchHub = watchHub;
    this.consensus = consensus;
    this.serving = serving;
    this.dataDir = dataDir;
    this.divisionClosed = divisionClosed;
    this.acquireWaits = acquireWaits;
  }

  /**
   * The meta group's state and each hosted lease group's: the node's lease metrics count them all
   * (a namespace lives in one group, so nothing is counted twice).
   */
  private List<LeaseCore> cores() {
    List<LeaseCore> cores = new java.util.ArrayList<>();
    cores.add(stateMachine.get().core());
    Consensus c = consensus.get();
    if (c != null) {
      cores.addAll(c.leaseGroupCores().values());
    }
    return cores;
  }

  @Override
  public int acquireWaiting() {
    return acquireWaits.waiting();
  }

  /** The live leases by namespace, from the lease index the apply thread keeps (no scan). */
  @Override
  public Map<String, Long> leasesByNamespace() {
    return NodeMetrics.orElse(
        () -> {
          Map<String, Long> all = new java.util.TreeMap<>();
          for (LeaseCore core : cores()) {
            core.liveLeasesByNamespace().forEach((ns, n) -> all.merge(ns, n, Long::sum));
          }
          return all;
        },
        Map.of());
  }

  @Override
  public long watchLagEvents() {
    return watchHub.maxLagEvents();
  }

  @Override
  public boolean divisionClosed() {
    return divisionClosed.getAsBoolean();
  }

  @Override
  public NodeMetrics.Disk dataDisk() {
    try {
      FileStore store = Files.getFileStore(dataDir);
      return new NodeMetrics.Disk(store.getUsableSpace(), store.getTotalSpace());
    } catch (IOException e) {
      return null;
    }
  }

  @Override
  public Map<String, Long> storeMemoryBytes() {
    return NodeMetrics.orElse(() -> stateMachine.get().core().store().memoryBytes(), Map.of());
  }

  @Override
  public Counters.Snapshot counters() {
    return cores().stream()
        .map(core -> core.counters().snapshot())
        .reduce(Counters.Snapshot::plus)
        .orElseThrow(); // the meta group's is always there
  }

  @Override
  public long liveLeases() {
    return NodeMetrics.orElse(() -> cores().stream().mapToLong(LeaseCore::liveLeases).sum(), 0L);
  }

  @Override
  public int watchers() {
    return watchHub.watchers();
  }

  @Override
  public long watchMessages() {
    return watchHub.eventMessages();
  }

  @Override
  public long watchSharedMessages() {
    return watchHub.sharedMessages();
  }

  @Override
  public int watchGroups() {
    return watchHub.watchGroups();
  }

  @Override
  public NodeMetrics.RaftView raft() {
    return NodeMetrics.orElse(
        () -> {
          Consensus.Status status = consensus.get().status();
          return new NodeMetrics.RaftView(
              status.role().name().toLowerCase(Locale.ROOT),
              status.term(),
              status.commitIndex(),
              status.appliedIndex(),
              stateMachine.get().latestSnapshotFile().map(s -> s.getIndex()).orElse(0L),
              status.members().size(),
              status.leaderId().isPresent());
        },
        new NodeMetrics.RaftView("unknown", 0, 0, 0, 0, 0, false));
  }

  @Override
  public NodeMetrics.Replication replication() {
    return NodeMetrics.orElse(
        () -> {
          Consensus.Replication r = consensus.get().replication();
          return new NodeMetrics.Replication(r.appendRequests(), r.appendBytes(), r.logFlushes());
        },
        new NodeMetrics.Replication(0, 0, -1));
  }

  @Override
  public List<NodeMetrics.GroupView> groups() {
    return consensus.get().groups().stream()
        .map(
            g ->
                new NodeMetrics.GroupView(
                    g.number(),
                    g.role() == Consensus.Role.LEADER,
                    g.term(),
                    g.commitIndex(),
                    g.appliedIndex()))
        .toList();
  }

  @Override
  public boolean serving() {
    return serving.getAsBoolean();
  }
}
