package io.leasehold.client.internal;

import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.leasehold.client.ClusterMember;
import io.leasehold.client.NamespaceMove;
import io.leasehold.client.NodeStatus;
import io.leasehold.client.SnapshotResult;
import io.leasehold.proto.v1.AddMemberRequest;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.MembershipResponse;
import io.leasehold.proto.v1.MoveNamespaceRequest;
import io.leasehold.proto.v1.RemoveMemberRequest;
import io.leasehold.proto.v1.SetGroupMembersRequest;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import io.leasehold.proto.v1.TakeSnapshotRequest;
import io.leasehold.proto.v1.TransferLeadershipRequest;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The wire side of {@code ClusterAdmin}. */
public final class ClusterCalls {
  private static final Duration SLOW_ATTEMPT = Duration.ofSeconds(65);

  private final ClientCore core;

  public ClusterCalls(ClientCore core) {
    this.core = core;
  }

  public CompletableFuture<NodeStatus> status() {
    core.ensureOpen("cluster status");
    return core.onCallbacks(
        core.calls()
            .call(
                Calls.Target.READ,
                ClusterGrpc.getStatusMethod(),
                StatusRequest.getDefaultInstance(),
                "Cluster.Status")
            .thenApply(Protos::nodeStatus));
  }

  /**
   * One attempt at the node at {@code clientAddress}, bounded by the attempt timeout: no retry, no
   * other node. An address outside the client's endpoints gets a channel for this call only.
   */
  public CompletableFuture<NodeStatus> status(String clientAddress) {
    Objects.requireNonNull(clientAddress, "clientAddress");
    core.ensureOpen("cluster status of " + clientAddress);
    String what = "Cluster.Status at " + clientAddress;
    CompletableFuture<NodeStatus> out = new CompletableFuture<>();
    Endpoint endpoint = core.connection().forOneCall(clientAddress);
    if (!core.connection().pooled(endpoint)) {
      out.whenComplete((s, e) -> endpoint.shutdown());
    }
    try {
      ClientCalls.asyncUnaryCall(
          endpoint
              .channel()
              .newCall(
                  ClusterGrpc.getStatusMethod(),
                  CallOptions.DEFAULT.withDeadlineAfter(
                      core.settings().attemptTimeout().toNanos(), TimeUnit.NANOSECONDS)),
          StatusRequest.getDefaultInstance(),
          new StreamObserver<StatusResponse>() {
            @Override
            public void onNext(StatusResponse s) {
              out.complete(Protos.nodeStatus(s));
            }

            @Override
            public void onError(Throwable t) {
              out.completeExceptionally(Errors.toException(what, Status.fromThrowable(t), false));
            }

            @Override
            public void onCompleted() {
              out.completeExceptionally(
                  Errors.toException(
                      what, Status.INTERNAL.withDescription("no reply message"), false));
            }
          });
    } catch (RuntimeException e) {
      out.completeExceptionally(e);
    }
    return core.onCallbacks(out);
  }

  public CompletableFuture<List<ClusterMember>> addMember(
      String id, String peerAddress, String clientAddress) {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(peerAddress, "peerAddress");
    Objects.requireNonNull(clientAddress, "clientAddress");
    AddMemberRequest request =
        AddMemberRequest.newBuilder()
            .setMember(
                Member.newBuilder()
                    .setId(id)
                    .setPeerAddress(peerAddress)
                    .setClientAddress(clientAddress))
            .build();
    return slow(ClusterGrpc.getAddMemberMethod(), request, "Cluster.AddMember " + id)
        .thenApply(ClusterCalls::members);
  }

  public CompletableFuture<List<ClusterMember>> removeMember(String id) {
    Objects.requireNonNull(id, "id");
    return slow(
            ClusterGrpc.getRemoveMemberMethod(),
            RemoveMemberRequest.newBuilder().setId(id).build(),
            "Cluster.RemoveMember " + id)
        .thenApply(ClusterCalls::members);
  }

  public CompletableFuture<List<ClusterMember>> setGroupMembers(
      int group, List<String> add, List<String> remove) {
    Objects.requireNonNull(add, "add");
    Objects.requireNonNull(remove, "remove");
    return slow(
            ClusterGrpc.getSetGroupMembersMethod(),
            SetGroupMembersRequest.newBuilder()
                .setGroup(group)
                .addAllAdd(add)
                .addAllRemove(remove)
                .build(),
            "Cluster.SetGroupMembers " + group)
        .thenApply(ClusterCalls::members);
  }

  public CompletableFuture<String> transferLeadership(String id) {
    Objects.requireNonNull(id, "id");
    return slow(
            ClusterGrpc.getTransferLeadershipMethod(),
            TransferLeadershipRequest.newBuilder().setId(id).build(),
            "Cluster.TransferLeadership " + id)
        .thenApply(r -> r.getLeaderId());
  }

  public CompletableFuture<String> transferLeadership() {
    return slow(
            ClusterGrpc.getTransferLeadershipMethod(),
            TransferLeadershipRequest.getDefaultInstance(),
            "Cluster.TransferLeadership")
        .thenApply(r -> r.getLeaderId());
  }

  public CompletableFuture<NamespaceMove> moveNamespace(String namespace, int toGroup) {
    Objects.requireNonNull(namespace, "namespace");
    return slow(
            ClusterGrpc.getMoveNamespaceMethod(),
            MoveNamespaceRequest.newBuilder()
                .setNamespace(namespace)
                .setToGroup(toGroup)
                .setTimeout(
                    com.google.protobuf.Duration.newBuilder()
                        .setSeconds(SLOW_ATTEMPT.minusSeconds(5).toSeconds()))
                .build(),
            "Cluster.MoveNamespace " + namespace)
        .thenApply(
            r -> new NamespaceMove(r.getNamespace(), r.getGroup(), r.getEpoch(), r.getMove()));
  }

  public CompletableFuture<SnapshotResult> takeSnapshot() {
    core.ensureOpen("cluster snapshot");
    long deadline = System.nanoTime() + SLOW_ATTEMPT.toNanos();
    return core.onCallbacks(
        core.calls()
            .send(
                Calls.Target.READ,
                ClusterGrpc.getTakeSnapshotMethod(),
                TakeSnapshotRequest.getDefaultInstance(),
                "Cluster.TakeSnapshot",
                deadline,
                SLOW_ATTEMPT.toNanos(),
                2)
            .thenApply(
                s ->
                    new SnapshotResult(
                        s.value().getId(),
                        s.value().getTerm(),
                        s.value().getIndex(),
                        s.value().getSizeBytes())));
  }

  private <Q, R> CompletableFuture<R> slow(MethodDescriptor<Q, R> method, Q request, String what) {
    core.ensureOpen(what);
    long deadline = System.nanoTime() + SLOW_ATTEMPT.multipliedBy(2).toNanos();
    return core.onCallbacks(
        core.calls()
            .send(Calls.Target.WRITE, method, request, what, deadline, SLOW_ATTEMPT.toNanos(), 3)
            .thenApply(Calls.Sent::value));
  }

  private static List<ClusterMember> members(MembershipResponse r) {
    return r.getMembersList().stream().map(Protos::member).toList();
  }
}
