package io.leasehold.client.internal;

import io.grpc.CallOptions;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.leasehold.client.ClusterStatus;
import io.leasehold.client.MemberRole;
import io.leasehold.client.MemberStatus;
import io.leasehold.proto.v1.ClusterGrpc;
import io.leasehold.proto.v1.Member;
import io.leasehold.proto.v1.StatusRequest;
import io.leasehold.proto.v1.StatusResponse;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Asks every member of the cluster for its own status: the members from any node, then each
 * directly.
 */
public final class MemberStatuses {
  private final ClientCore core;

  public MemberStatuses(ClientCore core) {
    this.core = core;
  }

  public CompletableFuture<ClusterStatus> clusterStatus() {
    core.ensureOpen("cluster status");
    CompletableFuture<ClusterStatus> out =
        core.calls()
            .call(
                Calls.Target.READ,
                ClusterGrpc.getStatusMethod(),
                StatusRequest.getDefaultInstance(),
                "Status")
            .thenCompose(
                any -> {
                  List<CompletableFuture<MemberStatus>> asked =
                      any.getMembersList().stream().map(this::memberStatus).toList();
                  return CompletableFuture.allOf(asked.toArray(CompletableFuture[]::new))
                      .thenApply(
                          v ->
                              new ClusterStatus(
                                  any.getGroupId(),
                                  asked.stream().map(CompletableFuture::join).toList()));
                });
    return core.onCallbacks(out);
  }

  /**
   * One attempt, bounded by the attempt timeout: a member that does not answer is listed with the
   * error.
   */
  private CompletableFuture<MemberStatus> memberStatus(Member m) {
    CompletableFuture<MemberStatus> out = new CompletableFuture<>();
    if (m.getClientAddress().isEmpty()) {
      out.complete(unreachable(m, "client address unknown"));
      return out;
    }
    try {
      ClientCalls.asyncUnaryCall(
          core.connection()
              .at(m.getClientAddress())
              .channel()
              .newCall(
                  ClusterGrpc.getStatusMethod(),
                  CallOptions.DEFAULT.withDeadlineAfter(
                      core.settings().attemptTimeout().toNanos(), TimeUnit.NANOSECONDS)),
          StatusRequest.getDefaultInstance(),
          new StreamObserver<>() {
            @Override
            public void onNext(StatusResponse s) {
              out.complete(
                  new MemberStatus(
                      m.getId(),
                      m.getPeerAddress(),
                      m.getClientAddress(),
                      Protos.role(s.getRole()),
                      s.getTerm(),
                      s.getLeaderId(),
                      s.getCommitIndex(),
                      s.getAppliedIndex(),
                      Optional.empty(),
                      s.getGroupsList().stream().map(Protos::groupStatus).toList()));
            }

            @Override
            public void onError(Throwable t) {
              Status s = Status.fromThrowable(t);
              out.complete(
                  unreachable(
                      m,
                      s.getCode() + (s.getDescription() == null ? "" : ": " + s.getDescription())));
            }

            @Override
            public void onCompleted() {
              out.complete(unreachable(m, "no reply"));
            }
          });
    } catch (RuntimeException e) {
      out.complete(unreachable(m, e.toString()));
    }
    return out;
  }

  private static MemberStatus unreachable(Member m, String error) {
    return new MemberStatus(
        m.getId(),
        m.getPeerAddress(),
        m.getClientAddress(),
        MemberRole.UNKNOWN,
        0,
        "",
        0,
        0,
        Optional.of(error));
  }
}
