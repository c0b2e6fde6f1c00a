package io.leasehold.client.internal;

import io.leasehold.client.AcquireRejectedException;
import io.leasehold.client.LeaseInfo;
import io.leasehold.client.LeaseListing;
import io.leasehold.client.Renewal;
import io.leasehold.proto.v1.AcceptTransferRequest;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResult;
import io.leasehold.proto.v1.TransferRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * The client's one-off lease calls: a read of one lease, a listing, a renewal, a release and a
 * transfer by token.
 */
public final class LeaseReads {
  private final ClientCore core;

  public LeaseReads(ClientCore core) {
    this.core = core;
  }

  public CompletableFuture<Optional<LeaseInfo>> get(String name) {
    Objects.requireNonNull(name, "name");
    core.ensureOpen("get " + name);
    return core.onCallbacks(
        core.calls()
            .call(
                Calls.Target.READ,
                LeasesGrpc.getGetMethod(),
                GetRequest.newBuilder().setName(name).build(),
                "Get " + name)
            .thenApply(
                r -> r.getFound() ? Optional.of(Protos.lease(r.getLease())) : Optional.empty()));
  }

  public CompletableFuture<LeaseListing> list(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    core.ensureOpen("list " + prefix);
    CompletableFuture<LeaseListing> all = new CompletableFuture<>();
    listFrom(ListRequest.newBuilder().setPrefix(prefix).build(), new ArrayList<>(), -1, 0, all);
    return core.onCallbacks(all);
  }

  public CompletableFuture<LeaseListing> listHeldBy(String holder, String prefix) {
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(prefix, "prefix");
    if (holder.isEmpty()) {
      throw new IllegalArgumentException("holder: must not be empty");
    }
    core.ensureOpen("list held by " + holder);
    CompletableFuture<LeaseListing> all = new CompletableFuture<>();
    listFrom(
        ListRequest.newBuilder().setHolder(holder).setPrefix(prefix).build(),
        new ArrayList<>(),
        -1,
        0,
        all);
    return core.onCallbacks(all);
  }

  public CompletableFuture<Optional<LeaseInfo>> transfer(
      String name, long token, String toHolder, Optional<Duration> ttl) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(toHolder, "toHolder");
    Objects.requireNonNull(ttl, "ttl");
    core.ensureOpen("transfer " + name);
    TransferRequest.Builder request =
        TransferRequest.newBuilder().setName(name).setToken(token).setToHolder(toHolder);
    ttl.ifPresent(t -> request.setTtl(Protos.duration(t)));
    return core.onCallbacks(
        core.calls()
            .call(
                Calls.Target.WRITE,
                LeasesGrpc.getTransferMethod(),
                request.build(),
                "Transfer " + name)
            .thenApply(
                r ->
                    switch (r.getOutcome()) {
                      case TRANSFERRED -> Optional.of(Protos.lease(r.getLease()));
                      case REJECTED ->
                          throw new AcquireRejectedException(
                              name, Protos.rejection(r.getRejection()));
                      default -> Optional.<LeaseInfo>empty();
                    }));
  }

  public CompletableFuture<OptionalLong> offer(
      String name, long token, String toHolder, Duration acceptWithin) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(toHolder, "toHolder");
    Objects.requireNonNull(acceptWithin, "acceptWithin");
    core.ensureOpen("offer " + name);
    TransferRequest request =
        TransferRequest.newBuilder()
            .setName(name)
            .setToken(token)
            .setToHolder(toHolder)
            .setAcceptWithin(Protos.duration(acceptWithin))
            .build();
    return core.onCallbacks(
        core.calls()
            .call(Calls.Target.WRITE, LeasesGrpc.getTransferMethod(), request, "Offer " + name)
            .thenApply(
                r ->
                    switch (r.getOutcome()) {
                      case OFFERED -> OptionalLong.of(r.getOffer());
                      case REJECTED ->
                          throw new AcquireRejectedException(
                              name, Protos.rejection(r.getRejection()));
                      default -> OptionalLong.empty();
                    }));
  }

  /**
   * Accepts the transfer offered as {@code offer}; completes with the lease as the cluster now
   * holds it for this client's holder, or empty if the offer no longer stands.
   */
  public CompletableFuture<Optional<LeaseInfo>> acceptTransfer(String name, long offer) {
    Objects.requireNonNull(name, "name");
    core.ensureOpen("accept transfer of " + name);
    AcceptTransferRequest request =
        AcceptTransferRequest.newBuilder()
            .setName(name)
            .setOffer(offer)
            .setHolder(core.settings().holder())
            .build();
    return core.calls()
        .call(
            Calls.Target.WRITE,
            LeasesGrpc.getAcceptTransferMethod(),
            request,
            "AcceptTransfer " + name)
        .thenApply(
            r ->
                switch (r.getOutcome()) {
                  case TRANSFERRED -> Optional.of(Protos.lease(r.getLease()));
                  case REJECTED ->
                      throw new AcquireRejectedException(name, Protos.rejection(r.getRejection()));
                  default -> Optional.<LeaseInfo>empty();
                });
  }

  private void listFrom(
      ListRequest request,
      List<LeaseInfo> leases,
      long revision,
      int group,
      CompletableFuture<LeaseListing> all) {
    core.calls()
        .call(Calls.Target.READ, LeasesGrpc.getListMethod(), request, "List " + request.getPrefix())
        .whenComplete(
            (page, error) -> {
              if (error != null) {
                all.completeExceptionally(Futures.unwrap(error));
                return;
              }
              page.getLeasesList().forEach(l -> leases.add(Protos.lease(l)));
              long r = revision < 0 ? page.getRevision() : revision;
              int g = revision < 0 ? page.getGroup() : group;
              if (page.getMore() && page.getLeasesCount() > 0) {
                listFrom(
                    request.toBuilder()
                        .setStartAfter(page.getLeases(page.getLeasesCount() - 1).getName())
                        .build(),
                    leases,
                    r,
                    g,
                    all);
              } else {
                all.complete(new LeaseListing(leases, r, g));
              }
            });
  }

  public CompletableFuture<Boolean> release(String name, long token) {
    Objects.requireNonNull(name, "name");
    core.ensureOpen("release " + name);
    ReleaseRequest request = ReleaseRequest.newBuilder().setName(name).setToken(token).build();
    return core.onCallbacks(
        core.calls()
            .call(Calls.Target.WRITE, LeasesGrpc.getReleaseMethod(), request, "Release " + name)
            .thenApply(r -> r.getOutcome() == Outcome.RELEASED));
  }

  public CompletableFuture<Optional<Renewal>> renew(String name, long token) {
    Objects.requireNonNull(name, "name");
    core.ensureOpen("renew " + name);
    RenewRequest request =
        RenewRequest.newBuilder()
            .addItems(RenewItem.newBuilder().setName(name).setToken(token))
            .build();
    return core.onCallbacks(
        core.calls()
            .call(Calls.Target.WRITE, LeasesGrpc.getRenewMethod(), request, "Renew " + name)
            .thenApply(
                r -> {
                  if (r.getResultsCount() != 1) {
                    throw new IllegalStateException(
                        "Renew " + name + ": " + r.getResultsCount() + " results for one item");
                  }
                  RenewResult result = r.getResults(0);
                  return switch (result.getOutcome()) {
                    case RENEWED -> {
                      Instant expiresAt = Protos.instant(result.getExpiresAt());
                      yield Optional.of(
                          new Renewal(
                              name,
                              token,
                              Protos.duration(result.getTtl()),
                              expiresAt,
                              result.hasHeartbeatInterval()
                                  ? Optional.of(Protos.duration(result.getHeartbeatInterval()))
                                  : Optional.empty(),
                              result.hasDeadline()
                                  ? Protos.instant(result.getDeadline())
                                  : expiresAt));
                    }
                    case REJECTED ->
                        throw new AcquireRejectedException(
                            name, Protos.rejection(result.getRejection()));
                    default -> Optional.<Renewal>empty();
                  };
                }));
  }
}
