package io.leasehold.jepsen.workload;

import com.google.protobuf.Duration;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.jepsen.history.Op;
import io.leasehold.jepsen.history.Recorder;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.GetRequest;
import io.leasehold.proto.v1.GetResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.ReleaseRequest;
import io.leasehold.proto.v1.ReleaseResponse;
import java.net.ConnectException;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Raw calls (one call, one recorded operation, no SDK retries) and how a raw gRPC failure is
 * recorded: certainly not applied (FAIL), or maybe applied (INFO).
 */
final class RawCalls {
  private RawCalls() {}

  static Op.Type classify(Throwable e) {
    if (e instanceof StatusRuntimeException s) {
      Status.Code code = s.getStatus().getCode();
      if (code == Status.Code.INVALID_ARGUMENT
          || code == Status.Code.RESOURCE_EXHAUSTED
          || code == Status.Code.PERMISSION_DENIED) {
        return Op.Type.FAIL; // refused before anything was proposed
      }
      for (Throwable c = s.getCause(); c != null; c = c.getCause()) {
        if (c instanceof ConnectException) {
          return Op.Type.FAIL; // never reached a node
        }
      }
    }
    return Op.Type.INFO;
  }

  static String describe(Throwable e) {
    return e instanceof StatusRuntimeException s
        ? s.getStatus().getCode().name()
        : e.getClass().getSimpleName();
  }

  /**
   * One Acquire, recorded: GRANTED with the token, CONFLICT with the holder and token seen, or the
   * outcome; returns the token granted.
   */
  static OptionalLong acquire(
      Recorder rec,
      int process,
      LeasesGrpc.LeasesBlockingStub stub,
      String name,
      String holder,
      long ttlSeconds) {
    Op inv = rec.invoke(process, "acquire", name, Optional.of(holder), OptionalLong.empty());
    try {
      AcquireResponse r =
          stub.acquire(
              AcquireRequest.newBuilder()
                  .setName(name)
                  .setHolder(holder)
                  .setTtl(Duration.newBuilder().setSeconds(ttlSeconds))
                  .build());
      if (r.getOutcome() == Outcome.GRANTED) {
        rec.complete(
            inv,
            Op.Type.OK,
            Optional.of(holder),
            OptionalLong.of(r.getLease().getToken()),
            "GRANTED");
        return OptionalLong.of(r.getLease().getToken());
      }
      if (r.getOutcome() == Outcome.CONFLICT) {
        rec.complete(
            inv,
            Op.Type.OK,
            Optional.of(r.getConflict().getHolder()),
            OptionalLong.of(r.getConflict().getToken()),
            "CONFLICT");
      } else {
        rec.complete(
            inv, Op.Type.OK, Optional.empty(), OptionalLong.empty(), r.getOutcome().name());
      }
    } catch (RuntimeException e) {
      rec.complete(inv, classify(e), Optional.of(holder), OptionalLong.empty(), describe(e));
    }
    return OptionalLong.empty();
  }

  /** One Get, recorded: FOUND with the holder and token, or NONE. */
  static void get(Recorder rec, int process, LeasesGrpc.LeasesBlockingStub stub, String name) {
    Op inv = rec.invoke(process, "get", name, Optional.empty(), OptionalLong.empty());
    try {
      GetResponse r = stub.get(GetRequest.newBuilder().setName(name).build());
      if (r.getFound()) {
        rec.complete(
            inv,
            Op.Type.OK,
            Optional.of(r.getLease().getHolder()),
            OptionalLong.of(r.getLease().getToken()),
            "FOUND");
      } else {
        rec.complete(inv, Op.Type.OK, Optional.empty(), OptionalLong.empty(), "NONE");
      }
    } catch (RuntimeException e) {
      rec.complete(inv, classify(e), Optional.empty(), OptionalLong.empty(), describe(e));
    }
  }

  /** One Release of {@code token}, recorded with its outcome (RELEASED or NOT_HELD). */
  static void release(
      Recorder rec,
      int process,
      LeasesGrpc.LeasesBlockingStub stub,
      String name,
      String holder,
      long token) {
    Op inv = rec.invoke(process, "release", name, Optional.of(holder), OptionalLong.of(token));
    try {
      ReleaseResponse r =
          stub.release(ReleaseRequest.newBuilder().setName(name).setToken(token).build());
      rec.complete(
          inv, Op.Type.OK, Optional.of(holder), OptionalLong.of(token), r.getOutcome().name());
    } catch (RuntimeException e) {
      rec.complete(inv, classify(e), Optional.of(holder), OptionalLong.of(token), describe(e));
    }
  }
}
