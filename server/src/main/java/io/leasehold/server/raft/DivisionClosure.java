package io.leasehold.server.raft;

import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.LifecycleLog;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A candidate whose configuration leaves it out is shut down by Ratis (NOT_IN_CONF, or the leader's
 * shouldShutdown answer). That happens to a removed member that is still running, and also to a
 * member being added back: while it catches up it replays the entry that removed it, and if the
 * leader falls silent for an election timeout just then, it stands for election and is closed. A
 * restart recovers it: a node whose configuration on disk leaves it out starts without an election
 * timer and waits for the leader.
 */
public final class DivisionClosure {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseholdNode.class);

  private final String nodeId;
  private final NodeRaft raft;

  /** Re-judges the node's health now; completes once it has. */
  private final Supplier<CompletableFuture<?>> recheckHealth;

  private final LifecycleLog lifecycle;
  private final BooleanSupplier nodeClosed;

  /** Completed, with the reason, when Ratis closes this node's division while the node runs. */
  private final CompletableFuture<String> closed = new CompletableFuture<>();

  DivisionClosure(
      String nodeId,
      NodeRaft raft,
      Supplier<CompletableFuture<?>> recheckHealth,
      LifecycleLog lifecycle,
      BooleanSupplier nodeClosed) {
    this.nodeId = nodeId;
    this.raft = raft;
    this.recheckHealth = recheckHealth;
    this.lifecycle = lifecycle;
    this.nodeClosed = nodeClosed;
  }

  /** Completes, with a one-line reason, if Ratis closes the division while the node runs. */
  public CompletableFuture<String> closed() {
    return closed.copy();
  }

  /** Whether Ratis has closed the division while the node runs. */
  public boolean isClosed() {
    return closed.isDone();
  }

  void closedByRatis(RoleInfoProto roleInfo) {
    if (nodeClosed.getAsBoolean()) {
      return;
    }
    RaftServer.Division d = raft.startedDivision();
    List<String> members =
        d == null
            ? List.of()
            : d.getRaftConf().getCurrentPeers().stream()
                .map(p -> p.getId().toString())
                .sorted()
                .toList();
    String reason =
        String.format(
            "Ratis closed the Raft division of node %s (role %s, term %d); the configuration it has, %s, %s",
            nodeId,
            roleInfo.getRole(),
            d == null ? -1 : d.getInfo().getCurrentTerm(),
            members,
            members.contains(nodeId)
                ? "lists it (a leader answered that it is not a member)"
                : "leaves it out (removed, or added back and still catching up)");
    lifecycle.event(
        "division_closed", "role", roleInfo.getRole(), "members", String.join(",", members));
    LOG.error(reason);
    // NOT_SERVING at once, for load balancers and for whoever acts on the completion.
    recheckHealth.get().whenComplete((v, e) -> closed.complete(reason));
  }
}
