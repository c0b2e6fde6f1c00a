package io.leasehold.server.api;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.RoutingGrpc;
import io.leasehold.server.TestCluster;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Stubs for the view APIs on a {@link TestCluster} node, and the bad-input assertion they share. */
final class ViewStubs {
  private ViewStubs() {}

  static RegistryGrpc.RegistryBlockingStub registry(TestCluster cluster, String id) {
    return RegistryGrpc.newBlockingStub(cluster.channel(id)).withInterceptors(PER_CALL_DEADLINE);
  }

  static RoutingGrpc.RoutingBlockingStub routing(TestCluster cluster, String id) {
    return RoutingGrpc.newBlockingStub(cluster.channel(id)).withInterceptors(PER_CALL_DEADLINE);
  }

  /** Every lease, without the read-time field "remaining", which changes by itself. */
  static List<Lease> leasesNow(LeasesGrpc.LeasesBlockingStub leases) {
    return leases.list(ListRequest.getDefaultInstance()).getLeasesList().stream()
        .map(l -> l.toBuilder().clearRemaining().build()).toList();
  }

  /** The call fails with INVALID_ARGUMENT whose description starts with the field, and no lease changes. */
  static void assertInvalid(LeasesGrpc.LeasesBlockingStub leases, String field, Runnable call) {
    List<Lease> before = leasesNow(leases);
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call::run);
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e.toString());
    assertTrue(e.getStatus().getDescription().startsWith(field + ":"),
        "the message names the field " + field + ": " + e.getStatus().getDescription());
    assertEquals(before, leasesNow(leases), "the leases are unchanged");
  }

  /** Every call gets its own 20 s deadline. */
  private static final ClientInterceptor PER_CALL_DEADLINE = new ClientInterceptor() {
    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return next.newCall(method, options.withDeadlineAfter(20, TimeUnit.SECONDS));
    }
  };
}
