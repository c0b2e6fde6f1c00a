package io.leasehold.client;

import io.leasehold.client.internal.Calls;
import io.leasehold.client.internal.ClientCore;
import io.leasehold.client.internal.Futures;
import io.leasehold.client.internal.Protos;
import io.leasehold.proto.v1.AdminGrpc;
import io.leasehold.proto.v1.BanRequest;
import io.leasehold.proto.v1.DeletePolicyRequest;
import io.leasehold.proto.v1.GetPolicyRequest;
import io.leasehold.proto.v1.HistoryRequest;
import io.leasehold.proto.v1.ListBansRequest;
import io.leasehold.proto.v1.ListBansResponse;
import io.leasehold.proto.v1.ListPoliciesRequest;
import io.leasehold.proto.v1.NamespacePolicy;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.Policy;
import io.leasehold.proto.v1.RevokeRequest;
import io.leasehold.proto.v1.SetPolicyRequest;
import io.leasehold.proto.v1.UnbanRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Operators' controls ({@link LeaseholdClient#admin()}): per-namespace policy, bans, revocation
 * and the history of ended leases. Every change is a replicated command; reads are linearizable.
 * Failures are those of the client's other calls ({@link InvalidRequestException} for bad input,
 * {@link ClusterUnavailableException} when no node answered).
 */
public final class LeaseholdAdmin {
  private final ClientCore core;

  LeaseholdAdmin(ClientCore core) {
    this.core = core;
  }

  /** The policy of {@code namespace} ({@code ""}: the default policy) and the policy in force there. */
  public CompletableFuture<PolicyInfo> policy(String namespace) {
    Objects.requireNonNull(namespace, "namespace");
    return call(Calls.Target.READ, AdminGrpc.getGetPolicyMethod(), GetPolicyRequest.newBuilder().setNamespace(namespace).build(),
        "GetPolicy " + namespace)
        .thenApply(r -> r.hasPolicy()
            ? withEffective(policy(r.getPolicy()), r.getEffective())
            : new PolicyInfo(namespace, Optional.empty(), Optional.of(r.getEffective()), 0, Optional.empty()));
  }

  /** Every stored policy: the default ({@code ""}) first, then namespaces in order. */
  public CompletableFuture<List<PolicyInfo>> policies() {
    return call(Calls.Target.READ, AdminGrpc.getListPoliciesMethod(), ListPoliciesRequest.getDefaultInstance(), "ListPolicies")
        .thenApply(r -> r.getPoliciesList().stream().map(LeaseholdAdmin::policy).toList());
  }

  /**
   * Replaces the policy of {@code namespace} as a whole (fields left unset take the built-in
   * values); completes with the policy now in force there.
   */
  public CompletableFuture<Policy> setPolicy(String namespace, Policy policy) {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(policy, "policy");
    return call(Calls.Target.WRITE, AdminGrpc.getSetPolicyMethod(),
        SetPolicyRequest.newBuilder().setNamespace(namespace).setPolicy(policy).build(), "SetPolicy " + namespace)
        .thenApply(r -> r.getEffective());
  }

  /** Removes the policy of {@code namespace}; completes with whether it had one. */
  public CompletableFuture<Boolean> deletePolicy(String namespace) {
    Objects.requireNonNull(namespace, "namespace");
    return call(Calls.Target.WRITE, AdminGrpc.getDeletePolicyMethod(),
        DeletePolicyRequest.newBuilder().setNamespace(namespace).build(), "DeletePolicy " + namespace)
        .thenApply(r -> r.getExisted());
  }

  /**
   * Bans {@code holder}: it cannot acquire or renew, and its live leases end at once (reason
   * BANNED). With a duration the ban is lifted by the leader when it is due; without, it holds
   * until {@link #unban}.
   */
  public CompletableFuture<BanInfo> ban(String holder, String reason, Optional<Duration> duration) {
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(duration, "duration");
    BanRequest.Builder b = BanRequest.newBuilder().setHolder(holder).setReason(reason);
    duration.ifPresent(d -> b.setDuration(Protos.duration(d)));
    return call(Calls.Target.WRITE, AdminGrpc.getBanMethod(), b.build(), "Ban " + holder).thenApply(r -> ban(r.getBan()));
  }

  /** Lifts the ban of {@code holder}; completes with whether it was banned. */
  public CompletableFuture<Boolean> unban(String holder) {
    Objects.requireNonNull(holder, "holder");
    return call(Calls.Target.WRITE, AdminGrpc.getUnbanMethod(), UnbanRequest.newBuilder().setHolder(holder).build(), "Unban " + holder)
        .thenApply(r -> r.getWasBanned());
  }

  /** Every ban in force, in holder order, read page by page. */
  public CompletableFuture<List<BanInfo>> bans() {
    CompletableFuture<List<BanInfo>> all = new CompletableFuture<>();
    bansFrom(ListBansRequest.getDefaultInstance(), new ArrayList<>(), all);
    return core.onCallbacks(all);
  }

  private void bansFrom(ListBansRequest request, List<BanInfo> bans, CompletableFuture<List<BanInfo>> all) {
    core.ensureOpen("ListBans");
    core.calls().call(Calls.Target.READ, AdminGrpc.getListBansMethod(), request, "ListBans")
        .whenComplete((ListBansResponse page, Throwable error) -> {
          if (error != null) {
            all.completeExceptionally(Futures.unwrap(error));
            return;
          }
          page.getBansList().forEach(b -> bans.add(ban(b)));
          if (page.getMore() && page.getBansCount() > 0) {
            bansFrom(request.toBuilder().setStartAfter(page.getBans(page.getBansCount() - 1).getHolder()).build(), bans, all);
          } else {
            all.complete(bans);
          }
        });
  }

  /**
   * Ends the live lease on {@code name} whoever holds it (reason REVOKED); with a non-zero
   * {@code token}, only if that is the lease's token. Completes with the lease as it was, or empty
   * if no such lease was held.
   */
  public CompletableFuture<Optional<LeaseInfo>> revoke(String name, String reason, long token) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(reason, "reason");
    return call(Calls.Target.WRITE, AdminGrpc.getRevokeMethod(),
        RevokeRequest.newBuilder().setName(name).setReason(reason).setToken(token).build(), "Revoke " + name)
        .thenApply(r -> r.getOutcome() == Outcome.REVOKED ? Optional.of(Protos.lease(r.getLease())) : Optional.<LeaseInfo>empty());
  }

  /** The leases on {@code name} that ended, newest first (at most {@code limit}; 0: all that is kept). */
  public CompletableFuture<List<EndedLease>> history(String name, int limit) {
    Objects.requireNonNull(name, "name");
    return history(HistoryRequest.newBuilder().setName(name).setLimit(limit).build(), "History " + name);
  }

  /** The leases {@code holder} held that ended, newest first (at most {@code limit}; 0: all that is kept). */
  public CompletableFuture<List<EndedLease>> historyOfHolder(String holder, int limit) {
    Objects.requireNonNull(holder, "holder");
    return history(HistoryRequest.newBuilder().setHolder(holder).setLimit(limit).build(), "History of holder " + holder);
  }

  private CompletableFuture<List<EndedLease>> history(HistoryRequest request, String what) {
    return call(Calls.Target.READ, AdminGrpc.getHistoryMethod(), request, what)
        .thenApply(r -> r.getLeasesList().stream().map(LeaseholdAdmin::ended).toList());
  }

  private <Q, R> CompletableFuture<R> call(Calls.Target target, io.grpc.MethodDescriptor<Q, R> method, Q request, String what) {
    core.ensureOpen(what);
    return core.onCallbacks(core.calls().call(target, method, request, what));
  }

  private static PolicyInfo policy(NamespacePolicy p) {
    return new PolicyInfo(p.getNamespace(), Optional.of(p.getPolicy()), Optional.empty(), p.getRevision(),
        p.hasUpdatedAt() ? Optional.of(Protos.instant(p.getUpdatedAt())) : Optional.empty());
  }

  private static PolicyInfo withEffective(PolicyInfo p, Policy effective) {
    return new PolicyInfo(p.namespace(), p.own(), Optional.of(effective), p.revision(), p.updatedAt());
  }

  private static BanInfo ban(io.leasehold.proto.v1.Ban b) {
    return new BanInfo(b.getHolder(), b.getReason(), Protos.instant(b.getBannedAt()),
        b.hasUntil() ? Optional.of(Protos.instant(b.getUntil())) : Optional.empty(), b.getRevision(), b.getLeasesEnded());
  }

  private static EndedLease ended(io.leasehold.proto.v1.EndedLease e) {
    return new EndedLease(e.getName(), e.getHolder(), e.getToken(), Protos.duration(e.getTtl()), Protos.instant(e.getAcquiredAt()),
        Protos.instant(e.getEndedAt()), e.getRenewCount(), e.getReason(),
        e.getMessage().isEmpty() ? Optional.empty() : Optional.of(e.getMessage()), e.getRevision());
  }
}
