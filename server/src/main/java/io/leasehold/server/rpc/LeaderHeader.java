package io.leasehold.server.rpc;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Tells a client that called a follower where the leader is: every response a follower sends
 * carries the {@code leasehold-leader} header with the leader's client address (when it knows it),
 * the name of the trailer an UNAVAILABLE carries ({@link GrpcErrors#LEADER_HINT}). A follower
 * forwards writes and answers them as the leader would, at the price of a second RPC on the
 * follower's CPU; a client that reads the header can send its next writes to the leader itself. The
 * leader's own responses carry nothing.
 */
public final class LeaderHeader implements ServerInterceptor {
  private final BooleanSupplier isLeader;
  private final Supplier<Optional<String>> leader;

  public LeaderHeader(BooleanSupplier isLeader, Supplier<Optional<String>> leader) {
    this.isLeader = isLeader;
    this.leader = leader;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    return next.startCall(
        new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void sendHeaders(Metadata responseHeaders) {
            if (!isLeader.getAsBoolean()) {
              leader
                  .get()
                  .ifPresent(address -> responseHeaders.put(GrpcErrors.LEADER_HINT, address));
            }
            super.sendHeaders(responseHeaders);
          }
        },
        headers);
  }
}
