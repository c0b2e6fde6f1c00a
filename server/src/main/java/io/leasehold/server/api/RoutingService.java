package io.leasehold.server.api;

import io.grpc.stub.StreamObserver;
import io.leasehold.proto.Partitions;
import io.leasehold.proto.v1.Attributes;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.ListRoutesRequest;
import io.leasehold.proto.v1.ListRoutesResponse;
import io.leasehold.proto.v1.LookupRequest;
import io.leasehold.proto.v1.LookupResponse;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.Route;
import io.leasehold.proto.v1.RoutingGrpc;
import io.leasehold.server.raft.Consensus;
import io.leasehold.statemachine.core.LogFormat;
import io.leasehold.statemachine.core.Validation;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The routing table: the view of the leases that carry an address, name → (holder, address, token,
 * partition, metadata, status). Reads only; a route changes with its lease.
 */
public final class RoutingService extends RoutingGrpc.RoutingImplBase {
  private final ReplicatedCalls calls;

  public RoutingService(Consensus consensus, Supplier<Optional<String>> leaderHint) {
    this.calls = new ReplicatedCalls(consensus, leaderHint);
  }

  @Override
  public void lookup(LookupRequest request, StreamObserver<LookupResponse> response) {
    GetRequest get =
        GetRequest.newBuilder().setName(request.getName()).setStale(request.getStale()).build();
    calls.read(
        () -> Validation.get(get),
        () -> ReadQuery.newBuilder().setGet(get).build(),
        request.getStale(),
        reply -> lookedUp(reply.getGet()),
        response);
  }

  @Override
  public void listRoutes(ListRoutesRequest request, StreamObserver<ListRoutesResponse> response) {
    if (!request.getHolder().isEmpty()
        && !calls.formatInForce(LogFormat.SESSIONS, "listing routes by holder", response)) {
      return;
    }
    ListRequest list =
        ListRequest.newBuilder()
            .setPrefix(request.getPrefix())
            .setLimit(request.getLimit())
            .setStartAfter(request.getStartAfter())
            .setStale(request.getStale())
            .setHolder(request.getHolder())
            .setWithAddress(true)
            .build();
    calls.read(
        () -> Validation.list(list),
        () -> ReadQuery.newBuilder().setList(list).build(),
        request.getStale(),
        reply -> listed(reply.getList()),
        response);
  }

  private static LookupResponse lookedUp(GetResponse got) {
    LookupResponse.Builder b = LookupResponse.newBuilder().setRevision(got.getRevision());
    if (got.getFound() && !got.getLease().getAttributes().getAddress().isEmpty()) {
      b.setFound(true).setRoute(route(got.getLease()));
    }
    return b.build();
  }

  private static ListRoutesResponse listed(ListResponse leases) {
    ListRoutesResponse.Builder b =
        ListRoutesResponse.newBuilder().setRevision(leases.getRevision()).setMore(leases.getMore());
    for (Lease lease : leases.getLeasesList()) {
      b.addRoutes(route(lease));
    }
    return b.build();
  }

  static Route route(Lease lease) {
    Attributes a = lease.getAttributes();
    return Route.newBuilder()
        .setName(lease.getName())
        .setHolder(lease.getHolder())
        .setAddress(a.getAddress())
        .setToken(lease.getToken())
        .setPartition(Partitions.of(lease.getName()))
        .putAllMetadata(a.getMetadataMap())
        .setStatus(a.getStatus())
        .build();
  }
}
