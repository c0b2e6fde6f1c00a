package io.leasehold.server.api;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.leasehold.proto.v1.LogCommand;
import io.leasehold.proto.v1.LogReply;
import io.leasehold.proto.v1.ReadQuery;
import io.leasehold.proto.v1.ReadReply;
import io.leasehold.server.auth.Caller;
import io.leasehold.server.raft.Consensus;
import io.leasehold.server.rpc.GrpcErrors;
import io.leasehold.statemachine.core.InvalidArgumentException;
import io.leasehold.statemachine.core.LogFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The shape of every unary API call (leases, registry, routing): validate, then one replicated
 * command or one read, then map the reply. Bad input fails before anything is proposed, so it costs
 * no replication and leaves the state alone; a command the core refused is INVALID_ARGUMENT naming
 * its field; Raft failures go through {@link GrpcErrors}; business outcomes are values in the
 * reply.
 */
final class ReplicatedCalls {
  private final Consensus consensus;
  private final Supplier<Optional<String>> leaderHint;

  ReplicatedCalls(Consensus consensus, Supplier<Optional<String>> leaderHint) {
    this.consensus = consensus;
    this.leaderHint = leaderHint;
  }

  /**
   * With authentication on, the command carries its caller's identity, which the core checks
   * against the leases it changes; that (and roles and grants) needs log format 3 in force on every
   * member, so until the leader has raised it, such writes are UNAVAILABLE (the leader raises it
   * within seconds of election once every member runs code that knows it).
   */
  <T> void write(
      Runnable validate,
      Supplier<LogCommand> command,
      Function<LogReply, T> map,
      StreamObserver<T> response) {
    LogCommand c = prepare(validate, command, response);
    if (c != null) {
      propose(c).whenComplete((reply, error) -> answer(reply, error, map, response));
    }
  }

  /**
   * Validates and builds the command of a write, stamped with its caller; null once the call has
   * been failed (bad input, or a log format not yet in force).
   */
  <T> LogCommand prepare(
      Runnable validate, Supplier<LogCommand> command, StreamObserver<T> response) {
    if (!valid(validate, response)) {
      return null;
    }
    Caller caller = Caller.current();
    LogCommand c = command.get();
    boolean roles = c.hasAddRole() || c.hasRemoveRole() || c.hasGrantRole() || c.hasRevokeRole();
    if ((caller.authenticated() || roles) && consensus.logFormat() < LogFormat.AUTH) {
      response.onError(
          Status.UNAVAILABLE
              .withDescription(
                  (roles ? "roles and grants" : "authenticated writes")
                      + " wait for log format "
                      + LogFormat.AUTH
                      + " (the cluster applies format "
                      + consensus.logFormat()
                      + " until the leader raises it, once every member runs code that knows it; retry)")
              .asRuntimeException());
      return null;
    }
    int needed = LogFormat.needed(c);
    if (needed > LogFormat.AUTH
        && !formatInForce(needed, c.getCommandCase().name().toLowerCase(Locale.ROOT), response)) {
      return null;
    }
    if (caller.authenticated()) {
      c = c.toBuilder().setCaller(caller.identity()).build();
    }
    return c;
  }

  CompletableFuture<LogReply> propose(LogCommand command) {
    return consensus.propose(command);
  }

  /** Answers a write with its reply, or with the status its failure maps to. */
  <T> void answer(
      LogReply reply, Throwable error, Function<LogReply, T> map, StreamObserver<T> response) {
    if (error != null) {
      response.onError(GrpcErrors.toStatus(error, leaderHint.get()));
    } else if (reply.hasInvalid()) {
      response.onError(
          GrpcErrors.invalid(reply.getInvalid().getField(), reply.getInvalid().getMessage()));
    } else if (reply.hasRefused()) {
      response.onError(
          Status.fromCodeValue(reply.getRefused().getCode())
              .withDescription(reply.getRefused().getMessage())
              .asRuntimeException());
    } else {
      reply(() -> map.apply(reply), response);
    }
  }

  /**
   * Whether the log format {@code format} is in force; if not, fails the call UNAVAILABLE: a
   * command only newer code applies must not reach the log while a member might predate it.
   */
  boolean formatInForce(int format, String what, StreamObserver<?> response) {
    if (consensus.logFormat() >= format) {
      return true;
    }
    response.onError(
        Status.UNAVAILABLE
            .withDescription(
                what
                    + " waits for log format "
                    + format
                    + " (the cluster applies format "
                    + consensus.logFormat()
                    + " until the leader raises it, once every member runs code that knows it; retry)")
            .asRuntimeException());
    return false;
  }

  <T> void read(
      Runnable validate,
      Supplier<ReadQuery> query,
      boolean stale,
      Function<ReadReply, T> map,
      StreamObserver<T> response) {
    if (!valid(validate, response)) {
      return;
    }
    consensus
        .read(query.get(), stale)
        .whenComplete(
            (reply, error) -> {
              if (error != null) {
                response.onError(GrpcErrors.toStatus(error, leaderHint.get()));
              } else {
                reply(() -> map.apply(reply), response);
              }
            });
  }

  /**
   * As {@link #read}, the mapped reply then completed by {@code then} (which must not fail: it
   * answers with what it has) before it is sent.
   */
  <T> void read(
      Runnable validate,
      Supplier<ReadQuery> query,
      boolean stale,
      Function<ReadReply, T> map,
      Function<T, CompletableFuture<T>> then,
      StreamObserver<T> response) {
    if (!valid(validate, response)) {
      return;
    }
    consensus
        .read(query.get(), stale)
        .whenComplete(
            (reply, error) -> {
              if (error != null) {
                response.onError(GrpcErrors.toStatus(error, leaderHint.get()));
                return;
              }
              T mapped;
              try {
                mapped = map.apply(reply);
              } catch (RuntimeException e) {
                response.onError(
                    Status.INTERNAL
                        .withDescription(String.valueOf(e))
                        .withCause(e)
                        .asRuntimeException());
                return;
              }
              then.apply(mapped)
                  .whenComplete(
                      (value, failed) -> reply(() -> failed == null ? value : mapped, response));
            });
  }

  /**
   * Sends the mapped reply; a mapping fault still ends the call (INTERNAL) instead of leaving it
   * open.
   */
  private static <T> void reply(Supplier<T> mapped, StreamObserver<T> response) {
    T value;
    try {
      value = mapped.get();
    } catch (RuntimeException e) {
      response.onError(
          Status.INTERNAL.withDescription(String.valueOf(e)).withCause(e).asRuntimeException());
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
