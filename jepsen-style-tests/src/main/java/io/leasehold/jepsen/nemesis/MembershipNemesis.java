package io.leasehold.jepsen.nemesis;

import io.leasehold.jepsen.cluster.Cluster;
import io.leasehold.jepsen.cluster.NodeProcess;
import io.leasehold.proto.v1.AddMemberRequest;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.MembershipResponse;
import io.leasehold.proto.v1.RemoveMemberRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Membership change, the way docs/operations.md tells an operator to do it: remove a random member
 * through {@code Cluster/RemoveMember}, stop it and delete its data; on heal, start it again empty
 * in join mode and add it back with {@code Cluster/AddMember} — it catches up by log or snapshot.
 * While the fault lasts the cluster has one member fewer.
 *
 * <p>When the member drawn leads, leadership is moved away first ({@code
 * Cluster/TransferLeadership}), as the operations guide advises before maintenance.
 *
 * <p>A RemoveMember call can fail and still take effect (seen in a soak: the call timed out, the
 * configuration change committed). So when no call succeeded, heal reads the membership back from
 * the leader: if the member is gone it is wiped and added back like any other, otherwise it was
 * never removed and there is nothing to do.
 */
public final class MembershipNemesis implements Nemesis {
  private static final Duration CHANGE_WITHIN = Duration.ofSeconds(60);
  private final Optional<String> unsupported;
  private Integer removed;

  public MembershipNemesis() {
    this(Optional.empty());
  }

  /**
   * @param unsupported why this cluster cannot take a member out and back, if it cannot
   */
  public MembershipNemesis(Optional<String> unsupported) {
    this.unsupported = unsupported;
  }

  @Override
  public Optional<String> unsupportedReason() {
    return unsupported;
  }

  /** The member a RemoveMember was attempted on whose outcome is unknown. */
  private Integer attempted;

  @Override
  public String kind() {
    return "membership";
  }

  @Override
  public String name() {
    return "membership";
  }

  @Override
  public String start(NemesisContext ctx) {
    int victim = ctx.randomNode();
    Cluster cluster = ctx.cluster();
    NodeProcess n = cluster.node(victim);
    boolean wasLeader = cluster.leader().map(l -> l == victim).orElse(false);
    if (wasLeader) {
      if (ClusterCalls.transferLeadershipFrom(ctx, victim).equals(n.id())) {
        throw new IllegalStateException("leadership did not move away from " + n.id());
      }
    }
    attempted = victim;
    MembershipResponse r =
        ClusterCalls.retrying(
            ctx,
            "remove " + n.id(),
            victim,
            CHANGE_WITHIN,
            i ->
                ClusterGrpc.newBlockingStub(cluster.channel(i))
                    .withDeadlineAfter(15, TimeUnit.SECONDS)
                    .removeMember(RemoveMemberRequest.newBuilder().setId(n.id()).build()));
    attempted = null;
    removed = victim;
    n.wipeForRejoin();
    return "removed "
        + n.id()
        + (wasLeader ? " (leader: moved leadership away first)" : "")
        + ", stopped it and deleted its data; members now "
        + ids(r);
  }

  @Override
  public String heal(NemesisContext ctx) {
    Cluster cluster = ctx.cluster();
    if (removed == null && attempted != null) {
      int i = attempted;
      attempted = null;
      String id = cluster.node(i).id();
      Optional<List<String>> members = ClusterCalls.leaderMembers(ctx, CHANGE_WITHIN);
      if (members.isEmpty()) {
        return "the removal of " + id + " failed, and no leader could say whether it took effect";
      }
      if (members.get().contains(id)) {
        return "the removal of " + id + " failed and did not take effect; members " + members.get();
      }
      cluster.node(i).wipeForRejoin();
      removed = i;
      // Then as after a removal that was answered.
    }
    if (removed == null) {
      return "nothing to add back";
    }
    int i = removed;
    NodeProcess n = cluster.node(i);
    n.start();
    Member m =
        Member.newBuilder()
            .setId(n.id())
            .setPeerAddress(cluster.network().host(i) + ":" + cluster.network().peerPort(i))
            .setClientAddress(cluster.network().host(i) + ":" + cluster.network().clientPort(i))
            .build();
    // The joining JVM may take a while to listen; AddMember fails until it does, and is retried.
    MembershipResponse r =
        ClusterCalls.retrying(
            ctx,
            "add " + n.id() + " back",
            i,
            CHANGE_WITHIN.multipliedBy(2),
            j ->
                ClusterGrpc.newBlockingStub(cluster.channel(j))
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .addMember(AddMemberRequest.newBuilder().setMember(m).build()));
    removed = null;
    return "started " + n.id() + " empty in join mode and added it back; members now " + ids(r);
  }

  private static String ids(MembershipResponse r) {
    return r.getMembersList().stream()
        .map(Member::getId)
        .sorted()
        .collect(Collectors.joining(",", "[", "]"));
  }
}
