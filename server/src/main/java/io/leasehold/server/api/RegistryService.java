package io.leasehold.server.api;

import com.google.protobuf.FieldMask;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.DeregisterRequest;
import io.leasehold.proto.v1.DeregisterResponse;
import io.leasehold.proto.v1.Instance;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.RegisterResponse;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.ReleaseResponse;
import io.leasehold.proto.v1.ResolveRequest;
import io.leasehold.proto.v1.ResolveResponse;
import io.leasehold.proto.v1.ServiceQuery;
import io.leasehold.proto.v1.SetStatusRequest;
import io.leasehold.proto.v1.SetStatusResponse;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.UpdateResponse;
import io.leasehold.server.auth.Caller;
import io.leasehold.server.raft.Consensus;
import io.leasehold.server.rpc.GrpcErrors;
import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.core.Limits;
import io.leasehold.statemachine.core.LogFormat;
import io.leasehold.statemachine.core.RegistryNames;
import io.leasehold.statemachine.core.Times;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The service registry: a view over leases, not a second store. An instance is the lease {@code
 * service/<service>/<instance>} whose attributes carry its address, metadata and status;
 * registering acquires it, deregistering releases it, renewing is {@code Leases.Renew} with its
 * token, and an instance that stops renewing expires like any lease.
 */
public final class RegistryService extends RegistryGrpc.RegistryImplBase {
  private static final FieldMask STATUS_ONLY = FieldMask.newBuilder().addPaths("status").build();

  /** How long a blocking Resolve waits when it does not say: Consul's default. */
  static final Duration DEFAULT_WAIT = Duration.ofMinutes(5);

  /** The longest a blocking Resolve may wait. */
  static final Duration MAX_WAIT = Duration.ofMinutes(10);

  private final ReplicatedCalls calls;
  private final Consensus consensus;
  private final ServiceWaits waits;

  public RegistryService(
      Consensus consensus, Supplier<Optional<String>> leaderHint, ServiceWaits waits) {
    this.calls = new ReplicatedCalls(consensus, leaderHint);
    this.consensus = consensus;
    this.waits = waits;
  }

  @Override
  public void register(RegisterRequest request, StreamObserver<RegisterResponse> response) {
    calls.write(
        () -> RegistryValidation.register(request),
        () -> {
          AcquireRequest.Builder acquire =
              AcquireRequest.newBuilder()
                  .setName(RegistryNames.leaseName(request.getService(), request.getInstance()))
                  .setHolder(holder(request))
                  .setAttributes(RegistryValidation.attributes(request))
                  .setRequestId(request.getRequestId());
          if (request.hasTtl()) {
            acquire.setTtl(request.getTtl());
          }
          acquire.setSession(request.getSession());
          return LogCommand.newBuilder().setAcquire(acquire).build();
        },
        reply -> registered(request, reply.getAcquire()),
        response);
  }

  /**
   * The registration's holder: with authentication on, the caller (unless the request named it);
   * else as given or defaulted.
   */
  private static String holder(RegisterRequest request) {
    Caller caller = Caller.current();
    return caller.authenticated() && request.getHolder().isEmpty()
        ? caller.identity()
        : RegistryValidation.holder(request);
  }

  @Override
  public void deregister(DeregisterRequest request, StreamObserver<DeregisterResponse> response) {
    calls.write(
        () -> RegistryValidation.deregister(request),
        () ->
            LogCommand.newBuilder()
                .setRelease(
                    ReleaseRequest.newBuilder()
                        .setName(
                            RegistryNames.leaseName(request.getService(), request.getInstance()))
                        .setToken(request.getToken()))
                .build(),
        reply -> deregistered(reply.getRelease()),
        response);
  }

  @Override
  public void setStatus(SetStatusRequest request, StreamObserver<SetStatusResponse> response) {
    calls.write(
        () -> RegistryValidation.setStatus(request),
        () ->
            LogCommand.newBuilder()
                .setUpdate(
                    UpdateRequest.newBuilder()
                        .setName(
                            RegistryNames.leaseName(request.getService(), request.getInstance()))
                        .setToken(request.getToken())
                        .setAttributes(Attributes.newBuilder().setStatus(request.getStatus()))
                        // Only the status: the address and metadata stay as registered.
                        .setUpdateMask(STATUS_ONLY))
                .build(),
        reply -> statusSet(request.getService(), request.getInstance(), reply.getUpdate()),
        response);
  }

  @Override
  public void resolve(ResolveRequest request, StreamObserver<ResolveResponse> response) {
    String prefix = RegistryNames.servicePrefix(request.getService());
    if (consensus.logFormat() < LogFormat.MANY) {
      // A cluster some member of which predates service versions: the instances alone.
      if (request.getWaitForVersion() != 0
          && !calls.formatInForce(LogFormat.MANY, "a blocking Resolve", response)) {
        return;
      }
      calls.read(
          () -> RegistryValidation.resolve(request),
          () ->
              ReadQuery.newBuilder()
                  .setList(
                      ListRequest.newBuilder()
                          .setPrefix(prefix)
                          .setLimit(Limits.MAX_LIST_LIMIT)
                          .setStale(request.getStale()))
                  .build(),
          request.getStale(),
          reply -> resolved(request, prefix, reply.getList(), 0),
          response);
      return;
    }
    if (request.getWaitForVersion() == 0) {
      read(request, prefix, () -> RegistryValidation.resolve(request), response);
      return;
    }
    try {
      RegistryValidation.resolve(request);
    } catch (InvalidArgumentException e) {
      response.onError(GrpcErrors.invalid(e));
      return;
    }
    long waitNanos =
        (request.hasWait() ? Times.micros(request.getWait()) * 1_000 : DEFAULT_WAIT.toNanos());
    blocking(request, prefix, waitNanos, response);
  }

  private void read(
      ResolveRequest request,
      String prefix,
      Runnable validate,
      StreamObserver<ResolveResponse> response) {
    calls.read(
        validate,
        () ->
            ReadQuery.newBuilder()
                .setService(ServiceQuery.newBuilder().setService(request.getService()))
                .build(),
        request.getStale(),
        reply ->
            resolved(
                request, prefix, reply.getService().getList(), reply.getService().getVersion()),
        response);
  }

  /**
   * A blocking Resolve: answers the first read whose version is above the one asked for, reading
   * again on each change to the service this node applies, or the read made when the wait is over.
   */
  private void blocking(
      ResolveRequest request, String prefix, long waitNanos, StreamObserver<ResolveResponse> call) {
    BooleanSupplier gone =
        call instanceof ServerCallStreamObserver<ResolveResponse> server
            ? server::isCancelled
            : () -> false;
    AtomicBoolean answered = new AtomicBoolean();
    AtomicReference<ServiceWaits.Waiter> waiter = new AtomicReference<>();
    Function<Boolean, StreamObserver<ResolveResponse>> answer =
        last ->
            new StreamObserver<>() {
              @Override
              public void onNext(ResolveResponse r) {
                if ((last || r.getVersion() > request.getWaitForVersion())
                    && answered.compareAndSet(false, true)) {
                  cancel(waiter);
                  if (!gone.getAsBoolean()) {
                    call.onNext(r);
                    call.onCompleted();
                  }
                }
              }

              @Override
              public void onError(Throwable t) {
                if (answered.compareAndSet(false, true)) {
                  cancel(waiter);
                  if (!gone.getAsBoolean()) {
                    call.onError(t);
                  }
                }
              }

              @Override
              public void onCompleted() {}
            };
    ServiceWaits.Waiter w =
        waits.await(
            request.getService(),
            request.getWaitForVersion(),
            waitNanos,
            () -> {
              if (!answered.get()) {
                read(request, prefix, () -> {}, answer.apply(false));
              }
            },
            () -> read(request, prefix, () -> {}, answer.apply(true)));
    if (w == null) {
      call.onError(
          Status.RESOURCE_EXHAUSTED
              .withDescription(
                  "wait_for_version: this node holds "
                      + ServiceWaits.MAX_WAITERS
                      + " blocking Resolve calls already; retry later or use Watch")
              .asRuntimeException());
      return;
    }
    waiter.set(w);
    if (call instanceof ServerCallStreamObserver<ResolveResponse> server) {
      server.setOnCancelHandler(() -> cancel(waiter));
    }
    // Registered first, then read: a change in between wakes the waiter and reads again.
    read(request, prefix, () -> {}, answer.apply(false));
  }

  private static void cancel(AtomicReference<ServiceWaits.Waiter> waiter) {
    ServiceWaits.Waiter w = waiter.get();
    if (w != null) {
      w.cancel();
    }
  }

  private static RegisterResponse registered(RegisterRequest request, AcquireResponse acquired) {
    RegisterResponse.Builder b =
        RegisterResponse.newBuilder()
            .setOutcome(acquired.getOutcome())
            .setRevision(acquired.getRevision());
    if (acquired.hasLease()) {
      b.setInstance(instance(request.getService(), request.getInstance(), acquired.getLease()));
    }
    if (acquired.hasConflict()) {
      b.setConflict(acquired.getConflict());
    }
    if (acquired.hasRejection()) {
      b.setRejection(acquired.getRejection());
    }
    if (acquired.hasHeartbeatInterval()) {
      b.setHeartbeatInterval(acquired.getHeartbeatInterval());
    }
    return b.build();
  }

  private static DeregisterResponse deregistered(ReleaseResponse released) {
    return DeregisterResponse.newBuilder()
        .setOutcome(released.getOutcome())
        .setRevision(released.getRevision())
        .build();
  }

  private static SetStatusResponse statusSet(
      String service, String instance, UpdateResponse updated) {
    SetStatusResponse.Builder b =
        SetStatusResponse.newBuilder()
            .setOutcome(updated.getOutcome())
            .setRevision(updated.getRevision());
    if (updated.hasLease()) {
      b.setInstance(instance(service, instance, updated.getLease()));
    }
    return b.build();
  }

  /**
   * The instances of the listing that match the request: SERVING ones (every status with
   * any_status, or those of statuses), with every metadata pair asked for, then those of the first
   * preferred zone that has any.
   */
  private static ResolveResponse resolved(
      ResolveRequest request, String prefix, ListResponse listed, long version) {
    ResolveResponse.Builder b =
        ResolveResponse.newBuilder().setRevision(listed.getRevision()).setVersion(version);
    List<Lease> matching = new ArrayList<>();
    for (Lease lease : listed.getLeasesList()) {
      String instance = lease.getName().substring(prefix.length());
      // A lease acquired directly under the prefix with a deeper name is not an instance.
      if (instance.isEmpty() || instance.indexOf('/') >= 0) {
        continue;
      }
      Attributes a = lease.getAttributes();
      if (statusMatches(request, a.getStatus()) && metadataMatches(request, a)) {
        matching.add(lease);
      }
    }
    List<Lease> chosen = matching;
    if (request.getZonesCount() > 0) {
      chosen = List.of();
      for (String zone : request.getZonesList()) {
        List<Lease> inZone = new ArrayList<>();
        for (Lease lease : matching) {
          if (zone.equals(RegistryNames.ANY_ZONE)
              || zone.equals(
                  lease.getAttributes().getMetadataOrDefault(RegistryNames.ZONE_KEY, null))) {
            inZone.add(lease);
          }
        }
        if (!inZone.isEmpty()) {
          chosen = inZone;
          b.setZone(zone);
          break;
        }
      }
    }
    for (Lease lease : chosen) {
      b.addInstances(
          instance(request.getService(), lease.getName().substring(prefix.length()), lease));
    }
    return b.build();
  }

  private static boolean statusMatches(ResolveRequest request, String status) {
    if (request.getStatusesCount() > 0) {
      return request.getStatusesList().contains(status);
    }
    return request.getAnyStatus() || RegistryValidation.SERVING.equals(status);
  }

  private static boolean metadataMatches(ResolveRequest request, Attributes a) {
    for (Map.Entry<String, String> want : request.getMetadataMap().entrySet()) {
      if (!want.getValue().equals(a.getMetadataOrDefault(want.getKey(), null))) {
        return false;
      }
    }
    return true;
  }

  static Instance instance(String service, String instance, Lease lease) {
    Attributes a = lease.getAttributes();
    return Instance.newBuilder()
        .setService(service)
        .setInstance(instance)
        .setAddress(a.getAddress())
        .putAllMetadata(a.getMetadataMap())
        .setStatus(a.getStatus())
        .setToken(lease.getToken())
        .setHolder(lease.getHolder())
        .setExpiresAt(lease.getExpiresAt())
        .setSession(lease.getSession())
        .setTtl(lease.getTtl())
        .build();
  }
}
