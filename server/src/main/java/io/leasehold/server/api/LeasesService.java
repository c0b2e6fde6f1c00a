package io.leasehold.server.api;

import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.ListResponse;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.ReleaseResponse;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.RenewResponse;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.proto.v1.UpdateResponse;
import io.leasehold.server.Replicator;
import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.core.Validation;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The Leases API. Every request is validated here, before anything reaches the log, so bad input
 * costs no replication and leaves the state alone; business outcomes come back in the reply.
 */
public final class LeasesService extends LeasesGrpc.LeasesImplBase {
  private final Replicator replicator;
  private final Supplier<Optional<String>> leaderHint;

  public LeasesService(Replicator replicator, Supplier<Optional<String>> leaderHint) {
    this.replicator = replicator;
    this.leaderHint = leaderHint;
  }

  @Override
  public void acquire(AcquireRequest request, StreamObserver<AcquireResponse> response) {
    write(() -> Validation.acquire(request), LogCommand.newBuilder().setAcquire(request), LogReply::getAcquire, response);
  }

  @Override
  public void renew(RenewRequest request, StreamObserver<RenewResponse> response) {
    write(() -> Validation.renew(request), LogCommand.newBuilder().setRenew(request), LogReply::getRenew, response);
  }

  @Override
  public void release(ReleaseRequest request, StreamObserver<ReleaseResponse> response) {
    write(() -> Validation.release(request), LogCommand.newBuilder().setRelease(request), LogReply::getRelease, response);
  }

  @Override
  public void update(UpdateRequest request, StreamObserver<UpdateResponse> response) {
    write(() -> Validation.update(request), LogCommand.newBuilder().setUpdate(request), LogReply::getUpdate, response);
  }

  @Override
  public void get(GetRequest request, StreamObserver<GetResponse> response) {
    read(() -> Validation.get(request), ReadQuery.newBuilder().setGet(request).build(), request.getStale(), ReadReply::getGet, response);
  }

  @Override
  public void list(ListRequest request, StreamObserver<ListResponse> response) {
    read(() -> Validation.list(request), ReadQuery.newBuilder().setList(request).build(), request.getStale(), ReadReply::getList, response);
  }

  private <T> void write(Runnable validate, LogCommand.Builder command, Function<LogReply, T> pick, StreamObserver<T> response) {
    if (!valid(validate, response)) {
      return;
    }
    replicator.propose(command.build()).whenComplete((reply, error) -> {
      if (error != null) {
        response.onError(GrpcErrors.toStatus(error, leaderHint.get()));
      } else if (reply.hasInvalid()) {
        response.onError(GrpcErrors.invalid(reply.getInvalid().getField(), reply.getInvalid().getMessage()));
      } else {
        response.onNext(pick.apply(reply));
        response.onCompleted();
      }
    });
  }

  private <T> void read(Runnable validate, ReadQuery query, boolean stale, Function<ReadReply, T> pick, StreamObserver<T> response) {
    if (!valid(validate, response)) {
      return;
    }
    replicator.read(query, stale).whenComplete((reply, error) -> {
      if (error != null) {
        response.onError(GrpcErrors.toStatus(error, leaderHint.get()));
      } else {
        response.onNext(pick.apply(reply));
        response.onCompleted();
      }
    });
  }

  private static boolean valid(Runnable validate, StreamObserver<?> response) {
    try {
      validate.run();
      return true;
    } catch (InvalidArgumentException e) {
      response.onError(GrpcErrors.invalid(e));
      return false;
    }
  }

}
