package io.leasehold.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.leasehold.proto.v1.Lease;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.ListRequest;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.RoutingGrpc;
import io.leasehold.server.TestCluster;
import java.util.List;

/**
 * Stubs for the view APIs on a {@link TestCluster} node, and the bad-input assertion they share.
 */
final class ViewStubs {
  private ViewStubs() {}

  static RegistryGrpc.RegistryBlockingStub registry(TestCluster cluster, String id) {
    return cluster.registry(id);
  }

  static RoutingGrpc.RoutingBlockingStub routing(TestCluster cluster, String id) {
    return cluster.routing(id);
  }

  /**
   * Every lease, without the read-time fields "remaining" and the deadline's (with where it came
   * from: the leader's, or the estimate when the leader did not answer in time on a busy machine),
   * which change by themselves.
   */
  static List<Lease> leasesNow(LeasesGrpc.LeasesBlockingStub leases) {
    return leases.list(ListRequest.getDefaultInstance()).getLeasesList().stream()
        .map(
            l ->
                l.toBuilder()
                    .clearRemaining()
                    .clearDeadline()
                    .clearDeadlineRemaining()
                    .clearDeadlineSource()
                    .clearExtensions()
                    .build())
        .toList();
  }

  /**
   * The call fails with INVALID_ARGUMENT whose description starts with the field, and no lease
   * changes.
   */
  static void assertInvalid(LeasesGrpc.LeasesBlockingStub leases, String field, Runnable call) {
    List<Lease> before = leasesNow(leases);
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call::run);
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e.toString());
    assertTrue(
        e.getStatus().getDescription().startsWith(field + ":"),
        "the message names the field " + field + ": " + e.getStatus().getDescription());
    assertEquals(before, leasesNow(leases), "the leases are unchanged");
  }
}
