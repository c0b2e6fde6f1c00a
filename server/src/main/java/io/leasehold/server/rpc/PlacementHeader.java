package io.leasehold.server.rpc;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.function.LongSupplier;

/**
 * On a cluster with lease groups, every response carries the {@code leasehold-placement-version}
 * header: the meta group's index of the last change to where namespaces live, as this node applied
 * it (docs/design/multi-raft.md, "Clients"). A client that routes writes to their groups' leaders
 * from an older table asks for the table again, so a namespace's move or first placement reaches it
 * with its next answer rather than when its table has aged. Without lease groups nothing is added.
 */
public final class PlacementHeader implements ServerInterceptor {
  public static final Metadata.Key<String> PLACEMENT_VERSION =
      Metadata.Key.of("leasehold-placement-version", Metadata.ASCII_STRING_MARSHALLER);

  private final LongSupplier version;

  /**
   * @param version the placement table's version; 0 without lease groups
   */
  public PlacementHeader(LongSupplier version) {
    this.version = version;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    return next.startCall(
        new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
          @Override
          public void sendHeaders(Metadata responseHeaders) {
            long v = version.getAsLong();
            if (v > 0) {
              responseHeaders.put(PLACEMENT_VERSION, Long.toString(v));
            }
            super.sendHeaders(responseHeaders);
          }
        },
        headers);
  }
}
