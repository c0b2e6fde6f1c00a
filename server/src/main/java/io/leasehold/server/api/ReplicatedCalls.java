package io.leasehold.server.api;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.server.Replicator;
import io.leasehold.statemachine.core.InvalidArgumentException;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The shape of every unary API call (leases, registry, routing): validate, then one replicated
 * command or one read, then map the reply. Bad input fails before anything is proposed, so it
 * costs no replication and leaves the state alone; a command the core refused is INVALID_ARGUMENT
 * naming its field; Raft failures go through {@link GrpcErrors}; business outcomes are values in
 * the reply.
 */
final class ReplicatedCalls {
  private final Replicator replicator;
  private final Supplier<Optional<String>> leaderHint;

  ReplicatedCalls(Replicator replicator, Supplier<Optional<String>> leaderHint) {
    this.replicator = replicator;
    this.leaderHint = leaderHint;
  }

  <T> void write(Runnable validate, Supplier<LogCommand> command, Function<LogReply, T> map, StreamObserver<T> response) {
    if (!valid(validate, response)) {
      return;
    }
    replicator.propose(command.get()).whenComplete((reply, error) -> {
      if (error != null) {
        response.onError(GrpcErrors.toStatus(error, leaderHint.get()));
      } else if (reply.hasInvalid()) {
        response.onError(GrpcErrors.invalid(reply.getInvalid().getField(), reply.getInvalid().getMessage()));
      } else {
        reply(() -> map.apply(reply), response);
      }
    });
  }

  <T> void read(Runnable validate, Supplier<ReadQuery> query, boolean stale, Function<ReadReply, T> map, StreamObserver<T> response) {
    if (!valid(validate, response)) {
      return;
    }
    replicator.read(query.get(), stale).whenComplete((reply, error) -> {
      if (error != null) {
        response.onError(GrpcErrors.toStatus(error, leaderHint.get()));
      } else {
        reply(() -> map.apply(reply), response);
      }
    });
  }

  /** Sends the mapped reply; a mapping fault still ends the call (INTERNAL) instead of leaving it open. */
  private static <T> void reply(Supplier<T> mapped, StreamObserver<T> response) {
    T value;
    try {
      value = mapped.get();
    } catch (RuntimeException e) {
      response.onError(Status.INTERNAL.withDescription(String.valueOf(e)).withCause(e).asRuntimeException());
      return;
    }
    response.onNext(value);
    response.onCompleted();
  }

  static boolean valid(Runnable validate, StreamObserver<?> response) {
    try {
      validate.run();
      return true;
    } catch (InvalidArgumentException e) {
      response.onError(GrpcErrors.invalid(e));
      return false;
    }
  }
}
