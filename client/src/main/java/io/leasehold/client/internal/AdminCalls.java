package io.leasehold.client.internal;

import io.grpc.MethodDescriptor;
import io.leasehold.client.BanInfo;
import io.leasehold.client.EndedLease;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.Policy;
import io.leasehold.client.PolicyInfo;
import io.leasehold.client.SessionDetail;
import io.leasehold.client.SessionInfo;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.CloseSessionRequest;
import io.leasehold.proto.v1.DeletePolicyRequest;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.GetSessionRequest;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.ListBansResponse;
import io.leasehold.proto.v1.ListPoliciesRequest;
import io.leasehold.proto.v1.ListSessionsRequest;
import io.leasehold.proto.v1.ListSessionsResponse;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.UnbanRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** The wire side of {@code LeaseholdAdmin}: policy, bans, revocation and history calls. */
public final class AdminCalls {
  private final ClientCore core;

  public AdminCalls(ClientCore core) {
    this.core = core;
  }

  public CompletableFuture<PolicyInfo> policy(String namespace) {
    Objects.requireNonNull(namespace, "namespace");
    return call(
            Calls.Target.READ,
            AdminGrpc.getGetPolicyMethod(),
            GetPolicyRequest.newBuilder().setNamespace(namespace).build(),
            "GetPolicy " + namespace)
        .thenApply(r -> Protos.policyInfo(namespace, r));
  }

  public CompletableFuture<List<PolicyInfo>> policies() {
    return call(
            Calls.Target.READ,
            AdminGrpc.getListPoliciesMethod(),
            ListPoliciesRequest.getDefaultInstance(),
            "ListPolicies")
        .thenApply(r -> r.getPoliciesList().stream().map(Protos::policyInfo).toList());
  }

  public CompletableFuture<Policy> setPolicy(String namespace, Policy policy) {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(policy, "policy");
    return call(
            Calls.Target.WRITE,
            AdminGrpc.getSetPolicyMethod(),
            SetPolicyRequest.newBuilder()
                .setNamespace(namespace)
                .setPolicy(Protos.policy(policy))
                .build(),
            "SetPolicy " + namespace)
        .thenApply(r -> Protos.policy(r.getEffective()));
  }

  public CompletableFuture<Boolean> deletePolicy(String namespace) {
    Objects.requireNonNull(namespace, "namespace");
    return call(
            Calls.Target.WRITE,
            AdminGrpc.getDeletePolicyMethod(),
            DeletePolicyRequest.newBuilder().setNamespace(namespace).build(),
            "DeletePolicy " + namespace)
        .thenApply(r -> r.getExisted());
  }

  public CompletableFuture<BanInfo> ban(String holder, String reason, Optional<Duration> duration) {
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(duration, "duration");
    BanRequest.Builder b = BanRequest.newBuilder().setHolder(holder).setReason(reason);
    duration.ifPresent(d -> b.setDuration(Protos.duration(d)));
    return call(Calls.Target.WRITE, AdminGrpc.getBanMethod(), b.build(), "Ban " + holder)
        .thenApply(r -> Protos.ban(r.getBan()));
  }

  public CompletableFuture<Boolean> unban(String holder) {
    Objects.requireNonNull(holder, "holder");
    return call(
            Calls.Target.WRITE,
            AdminGrpc.getUnbanMethod(),
            UnbanRequest.newBuilder().setHolder(holder).build(),
            "Unban " + holder)
        .thenApply(r -> r.getWasBanned());
  }

  public CompletableFuture<List<BanInfo>> bans() {
    CompletableFuture<List<BanInfo>> all = new CompletableFuture<>();
    bansFrom(ListBansRequest.getDefaultInstance(), new ArrayList<>(), all);
    return core.onCallbacks(all);
  }

  private void bansFrom(
      ListBansRequest request, List<BanInfo> bans, CompletableFuture<List<BanInfo>> all) {
    core.ensureOpen("ListBans");
    core.calls()
        .call(Calls.Target.READ, AdminGrpc.getListBansMethod(), request, "ListBans")
        .whenComplete(
            (ListBansResponse page, Throwable error) -> {
              if (error != null) {
                all.completeExceptionally(Futures.unwrap(error));
                return;
              }
              page.getBansList().forEach(b -> bans.add(Protos.ban(b)));
              if (page.getMore() && page.getBansCount() > 0) {
                bansFrom(
                    request.toBuilder()
                        .setStartAfter(page.getBans(page.getBansCount() - 1).getHolder())
                        .build(),
                    bans,
                    all);
              } else {
                all.complete(bans);
              }
            });
  }

  public CompletableFuture<Optional<LeaseInfo>> revoke(String name, String reason, long token) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(reason, "reason");
    return call(
            Calls.Target.WRITE,
            AdminGrpc.getRevokeMethod(),
            RevokeRequest.newBuilder().setName(name).setReason(reason).setToken(token).build(),
            "Revoke " + name)
        .thenApply(
            r ->
                r.getOutcome() == Outcome.REVOKED
                    ? Optional.of(Protos.lease(r.getLease()))
                    : Optional.<LeaseInfo>empty());
  }

  public CompletableFuture<List<EndedLease>> history(String name, int limit) {
    Objects.requireNonNull(name, "name");
    return history(
        HistoryRequest.newBuilder().setName(name).setLimit(limit).build(), "History " + name);
  }

  public CompletableFuture<List<EndedLease>> historyOfHolder(String holder, int limit) {
    Objects.requireNonNull(holder, "holder");
    return history(
        HistoryRequest.newBuilder().setHolder(holder).setLimit(limit).build(),
        "History of holder " + holder);
  }

  private CompletableFuture<List<EndedLease>> history(HistoryRequest request, String what) {
    return call(Calls.Target.READ, AdminGrpc.getHistoryMethod(), request, what)
        .thenApply(r -> r.getLeasesList().stream().map(Protos::ended).toList());
  }

  public CompletableFuture<List<SessionInfo>> sessions(String holder) {
    Objects.requireNonNull(holder, "holder");
    CompletableFuture<List<SessionInfo>> all = new CompletableFuture<>();
    sessionsFrom(
        ListSessionsRequest.newBuilder().setHolder(holder).build(), new ArrayList<>(), all);
    return core.onCallbacks(all);
  }

  private void sessionsFrom(
      ListSessionsRequest request,
      List<SessionInfo> sessions,
      CompletableFuture<List<SessionInfo>> all) {
    core.ensureOpen("ListSessions");
    core.calls()
        .call(Calls.Target.READ, LeasesGrpc.getListSessionsMethod(), request, "ListSessions")
        .whenComplete(
            (ListSessionsResponse page, Throwable error) -> {
              if (error != null) {
                all.completeExceptionally(Futures.unwrap(error));
                return;
              }
              page.getSessionsList().forEach(s -> sessions.add(Protos.session(s)));
              if (page.getMore() && page.getSessionsCount() > 0) {
                sessionsFrom(
                    request.toBuilder()
                        .setStartAfter(page.getSessions(page.getSessionsCount() - 1).getId())
                        .build(),
                    sessions,
                    all);
              } else {
                all.complete(sessions);
              }
            });
  }

  public CompletableFuture<Optional<SessionDetail>> session(long id) {
    return call(
            Calls.Target.READ,
            LeasesGrpc.getGetSessionMethod(),
            GetSessionRequest.newBuilder().setSession(id).build(),
            "GetSession " + id)
        .thenApply(
            r ->
                r.getFound()
                    ? Optional.of(
                        new SessionDetail(
                            Protos.session(r.getSession()), r.getLeasesList(), r.getMore()))
                    : Optional.<SessionDetail>empty());
  }

  public CompletableFuture<Long> closeSession(long id) {
    return call(
            Calls.Target.WRITE,
            LeasesGrpc.getCloseSessionMethod(),
            CloseSessionRequest.newBuilder().setSession(id).build(),
            "CloseSession " + id)
        .thenApply(r -> r.getOutcome() == Outcome.CLOSED ? r.getLeasesEnded() : -1L);
  }

  private <Q, R> CompletableFuture<R> call(
      Calls.Target target, MethodDescriptor<Q, R> method, Q request, String what) {
    core.ensureOpen(what);
    return core.onCallbacks(core.calls().call(target, method, request, what));
  }
}
