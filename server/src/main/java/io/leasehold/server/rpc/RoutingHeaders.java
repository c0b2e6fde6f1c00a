package io.leasehold.server.rpc;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Tells a client where to send its next calls, in the headers of every response:
 *
 * <ul>
 *   <li>{@code leasehold-leader}, from a follower: the leader's client address (when it knows it),
 *       the name of the trailer an UNAVAILABLE carries ({@link GrpcErrors#LEADER_HINT}). A follower
 *       forwards writes and answers them as the leader would, at the price of a second RPC on the
 *       follower's CPU; a client that reads the header can send its next writes to the leader
 *       itself. The leader's own responses carry nothing.
 *   <li>{@code leasehold-placement-version}, on a cluster with lease groups: the meta group's index
 *       of the last change to where namespaces live, as this node applied it
 *       (docs/design/multi-raft.md, "Clients"). A client that routes writes to their groups'
 *       leaders from an older table asks for it again, so a namespace's move or first placement
 *       reaches it with its next answer rather than when its table has aged.
 * </ul>
 */
public final class RoutingHeaders implements ServerInterceptor {
  public static final Metadata.Key<String> PLACEMENT_VERSION =
      Metadata.Key.of("leasehold-placement-version", Metadata.ASCII_STRING_MARSHALLER);

  private final BooleanSupplier isLeader;
  private final Supplier<Optional<String>> leader;
  private final LongSupplier placementVersion;

  /**
   * @param placementVersion the placement table's version; 0 without lease groups
   */
  public RoutingHeaders(
      BooleanSupplier isLeader, Supplier<Optional<String>> leader, LongSupplier placementVersion) {
    this.isLeader = isLeader;
    this.leader = leader;
    this.placementVersion = placementVersion;
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
            long version = placementVersion.getAsLong();
            if (version > 0) {
              responseHeaders.put(PLACEMENT_VERSION, Long.toString(version));
            }
            super.sendHeaders(responseHeaders);
          }
        },
        headers);
  }
}
