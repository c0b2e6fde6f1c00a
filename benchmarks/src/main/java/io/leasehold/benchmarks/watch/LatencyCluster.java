package io.leasehold.benchmarks.watch;

import io.grpc.ManagedChannel;
import io.leasehold.server.LeaseholdNode;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.ratis.statemachine.SnapshotInfo;

/**
 * The three-node cluster the latency run measures: in this JVM ({@link #inThisJvm}, the default) or
 * one JVM per node ({@link NodeProcesses}, {@code --nodes=process}), as a deployment runs them.
 */
interface LatencyCluster extends AutoCloseable {
  /** Where the nodes run, for the run's heading. */
  String where();

  List<? extends Node> nodes();

  /** Waits until a node leads with its expiry ticker promoted, as TestCluster does. */
  Node awaitReadyLeader(Duration timeout);

  /** The node that leads now, if one does. */
  Optional<? extends Node> leader();

  /** A node that does not lead now. */
  default Node follower() {
    return nodes().stream().filter(n -> !n.isLeader()).findFirst().orElseThrow();
  }

  /**
   * A channel to the node's client port; {@code acceptLz4}: as the SDK's, taking lz4-block Watch
   * streams.
   */
  ManagedChannel channel(Node node, boolean acceptLz4);

  ManagedChannel writerChannel(Node node, boolean shareWatchersLoop);

  /**
   * Starts a period over which {@link #periodReport} gives the nodes' own CPU and GC pauses where
   * they run apart.
   */
  void markPeriod();

  /**
   * The nodes' CPU and GC pauses since {@link #markPeriod}, where they run in processes of their
   * own; empty in this JVM, whose own figures cover them.
   */
  PeriodReport periodReport(int topThreads);

  record PeriodReport(List<String> lines, double jitCores, double cores) {
    static final PeriodReport NONE = new PeriodReport(List.of(), 0, 0);
  }

  @Override
  void close();

  /** One node, wherever it runs. */
  interface Node {
    String id();

    String clientAddress();

    boolean isLeader();

    /** Leads, with its expiry ticker promoted. */
    boolean isReadyLeader();

    long appliedIndex();

    long commitIndex();

    /** Its latest snapshot's index, 0 if none. */
    long latestSnapshotIndex();

    /**
     * Starts a snapshot; {@code done} hears one line when it ends, where that can be known here.
     */
    void startSnapshot(Consumer<String> done);

    /**
     * From now on, records when this node (as leader) finds each index in {@code (base, base +
     * length)} committed.
     */
    void recordCommits(long base, int length);

    /** Stops recording and hands over what was recorded. */
    CommitTimes commitTimes();

    /** The node itself, where it runs in this JVM (the follower's path can then be traced). */
    Optional<LeaseholdNode> inThisJvm();
  }

  /** A node in this JVM. */
  final class InJvmNode implements Node {
    private final LeaseholdNode node;
    private volatile CommitTimes recording;

    InJvmNode(LeaseholdNode node) {
      this.node = node;
    }

    @Override
    public String id() {
      return node.id();
    }

    @Override
    public String clientAddress() {
      return node.clientAddress();
    }

    @Override
    public boolean isLeader() {
      return node.isLeader();
    }

    @Override
    public boolean isReadyLeader() {
      return node.isLeader() && node.diagnostics().ticker().scheduler().isActive();
    }

    @Override
    public long appliedIndex() {
      return node.ratis().division().getInfo().getLastAppliedIndex();
    }

    @Override
    public long commitIndex() {
      return node.ratis().division().getRaftLog().getLastCommittedIndex();
    }

    @Override
    public long latestSnapshotIndex() {
      SnapshotInfo latest = node.ratis().division().getStateMachine().getLatestSnapshot();
      return latest == null ? 0L : latest.getIndex();
    }

    @Override
    public void startSnapshot(Consumer<String> done) {
      node.consensus()
          .takeSnapshot(Duration.ofSeconds(60))
          .whenComplete(
              (snapshot, error) ->
                  done.accept(
                      error == null
                          ? "snapshot on " + node.id() + " at index " + snapshot.index() + " done"
                          : "no snapshot on " + node.id() + ": " + error));
    }

    @Override
    public void recordCommits(long base, int length) {
      recording = new CommitTimes(base, length);
      node.diagnostics().commitClock().listen(recording, base);
    }

    @Override
    public CommitTimes commitTimes() {
      node.diagnostics().commitClock().listen(null, 0);
      return recording;
    }

    @Override
    public Optional<LeaseholdNode> inThisJvm() {
      return Optional.of(node);
    }
  }

  /** The nodes of {@code cluster}, in this JVM. */
  static LatencyCluster inThisJvm(BenchCluster cluster) {
    List<InJvmNode> nodes = cluster.nodes().stream().map(InJvmNode::new).toList();
    return new LatencyCluster() {
      @Override
      public String where() {
        return "in this JVM";
      }

      @Override
      public List<? extends Node> nodes() {
        return nodes;
      }

      @Override
      public Node awaitReadyLeader(Duration timeout) {
        LeaseholdNode leader = cluster.awaitReadyLeader(timeout);
        return nodes.stream().filter(n -> n.node == leader).findFirst().orElseThrow();
      }

      @Override
      public Optional<? extends Node> leader() {
        return nodes.stream().filter(InJvmNode::isLeader).findFirst();
      }

      @Override
      public ManagedChannel channel(Node node, boolean acceptLz4) {
        return cluster.channel(((InJvmNode) node).node, acceptLz4);
      }

      @Override
      public ManagedChannel writerChannel(Node node, boolean shareWatchersLoop) {
        return cluster.writerChannel(((InJvmNode) node).node, shareWatchersLoop);
      }

      @Override
      public void markPeriod() {}

      @Override
      public PeriodReport periodReport(int topThreads) {
        return PeriodReport.NONE;
      }

      @Override
      public void close() {
        cluster.close();
      }
    };
  }
}
