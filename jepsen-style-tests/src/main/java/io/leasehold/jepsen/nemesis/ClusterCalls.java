package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.cluster.Cluster;
import io.leasehold.jepsen.run.Pacing;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.Role;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import io.leasehold.proto.v1.TransferLeadershipRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * Calls on the Cluster service that a nemesis makes through whichever member answers: tries the
 * members in turn (skipping {@code avoid}) until one call succeeds or {@code within} runs out. A
 * membership change may be ABORTED (another one is in progress) or lose its leader midway;
 * AddMember and RemoveMember are idempotent, so trying again is safe.
 */
final class ClusterCalls {
  private ClusterCalls() {}

  /**
   * Asks node {@code node} (the leader) to hand leadership to any other member; returns the new
   * leader's id.
   */
  static String transferLeadershipFrom(NemesisContext ctx, int node) {
    return ClusterGrpc.newBlockingStub(ctx.cluster().channel(node))
        .withDeadlineAfter(15, TimeUnit.SECONDS)
        .transferLeadership(
            TransferLeadershipRequest.newBuilder()
                .setTimeout(com.google.protobuf.Duration.newBuilder().setSeconds(10))
                .build())
        .getLeaderId();
  }

  /**
   * The member ids of the configuration as the leader has it, asked of the members in turn until
   * one of them leads, or empty when none does within {@code within}.
   */
  static Optional<List<String>> leaderMembers(NemesisContext ctx, Duration within) {
    try {
      return Optional.of(
          retrying(
              ctx,
              "read the leader's membership",
              -1,
              within,
              i -> {
                StatusResponse s =
                    ClusterGrpc.newBlockingStub(ctx.cluster().channel(i))
                        .withDeadlineAfter(5, TimeUnit.SECONDS)
                        .status(StatusRequest.getDefaultInstance());
                if (s.getRole() != Role.LEADER) {
                  throw new IllegalStateException(s.getId() + " does not lead");
                }
                return s.getMembersList().stream().map(Member::getId).sorted().toList();
              }));
    } catch (IllegalStateException noLeader) {
      return Optional.empty();
    }
  }

  static <T> T retrying(
      NemesisContext ctx, String what, int avoid, Duration within, IntFunction<T> call) {
    Cluster cluster = ctx.cluster();
    long deadline = System.nanoTime() + within.toNanos();
    RuntimeException last = null;
    while (System.nanoTime() - deadline < 0) {
      for (int i : ctx.shuffledNodes()) {
        if (i == avoid || !cluster.node(i).isRunning() || cluster.node(i).isPaused()) {
          continue;
        }
        try {
          return call.apply(i);
        } catch (RuntimeException e) {
          last = e;
        }
      }
      Pacing.sleep(Duration.ofMillis(500));
    }
    throw new IllegalStateException(
        what
            + ": no member did it within "
            + within.toSeconds()
            + " s"
            + (last == null ? "" : "; last error: " + last.getMessage()),
        last);
  }
}
