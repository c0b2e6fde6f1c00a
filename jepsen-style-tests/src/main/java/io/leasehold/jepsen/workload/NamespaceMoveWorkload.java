package io.leasehold.jepsen.workload;

import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.run.Pacing;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.MoveNamespaceRequest;
import io.leasehold.proto.v1.MoveNamespaceResponse;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Namespace moves on a cluster with lease groups (docs/design/multi-raft.md, "Moving a namespace"):
 * every few seconds one of {@link #NAMESPACES} goes to a lease group picked at random, through a
 * node picked at random, while the other workloads use it and the nemeses strike. Each move is an
 * operation {@code move} on the namespace: OK with the group and epoch it reached, FAIL when it was
 * abandoned or refused, INFO when unanswered (it may still finish). The checkers judge what the
 * moves did to the leases, tokens and owners of the namespaces.
 */
public final class NamespaceMoveWorkload implements Workload {
  /**
   * The namespaces that move: the locks' (whose watchers list again after each move, {@link
   * WatchWorkload}), the election's and the partitions'. The registry's cannot move.
   */
  public static final List<String> NAMESPACES = List.of("lock", "election", "partitions");

  private final int leaseGroups;
  private final Threads threads = new Threads();

  public NamespaceMoveWorkload(int leaseGroups) {
    this.leaseGroups = leaseGroups;
  }

  @Override
  public String name() {
    return "moves";
  }

  @Override
  public void start(WorkloadContext ctx) {
    threads.spawn(
        "moves",
        () -> {
          // The namespaces are placed by their workloads' first grants.
          Pacing.sleep(java.time.Duration.ofSeconds(4));
          while (threads.running()) {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            String ns = NAMESPACES.get(random.nextInt(NAMESPACES.size()));
            int to = 1 + random.nextInt(leaseGroups);
            int node = random.nextInt(ctx.cluster().size());
            Op inv = ctx.recorder().invoke(400, "move", ns, Optional.empty(), OptionalLong.empty());
            try {
              MoveNamespaceResponse moved =
                  ClusterGrpc.newBlockingStub(ctx.cluster().channel(node))
                      .withDeadlineAfter(30, TimeUnit.SECONDS)
                      .moveNamespace(
                          MoveNamespaceRequest.newBuilder()
                              .setNamespace(ns)
                              .setToGroup(to)
                              .setTimeout(com.google.protobuf.Duration.newBuilder().setSeconds(25))
                              .build());
              ctx.recorder()
                  .complete(
                      inv,
                      Op.Type.OK,
                      Optional.empty(),
                      OptionalLong.of(moved.getEpoch()),
                      "group " + moved.getGroup());
            } catch (RuntimeException e) {
              ctx.recorder()
                  .complete(
                      inv,
                      RawCalls.classify(e),
                      Optional.empty(),
                      OptionalLong.empty(),
                      "to group " + to + ": " + e.getMessage());
            }
            Pacing.sleep(java.time.Duration.ofMillis(3000 + random.nextInt(4000)));
          }
        });
  }

  @Override
  public void stop() {
    threads.stop();
  }
}
