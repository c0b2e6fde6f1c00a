package io.leasehold.server.api;

import static io.leasehold.server.Requests.acquire;
import static io.leasehold.server.Requests.list;
import static io.leasehold.server.Requests.release;
import static io.leasehold.server.Requests.seconds;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Duration;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.leasehold.proto.v1.AcquireRequest;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.UpdateRequest;
import io.leasehold.server.TestCluster;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** Bad input over gRPC is INVALID_ARGUMENT naming the field, and leaves the leases as they were. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputTest {
  TestCluster cluster;
  LeasesGrpc.LeasesBlockingStub leases;
  long heldToken;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    cluster = TestCluster.start(3, dir);
    leases = cluster.leases(cluster.followers().get(0).id());
    AcquireResponse r = leases.acquire(acquire("lock/held", "runner-1", 60));
    assertEquals(Outcome.GRANTED, r.getOutcome());
    heldToken = r.getLease().getToken();
  }

  @AfterAll
  void stop() {
    cluster.close();
  }

  private void assertInvalid(String field, Runnable call) {
    ViewStubs.assertInvalid(leases, field, call);
  }

  @Test
  void emptyNameIsInvalid() {
    assertInvalid("name", () -> leases.acquire(acquire("", "runner-2", 30)));
  }

  @Test
  void nameWithoutNamespaceIsInvalid() {
    assertInvalid("name", () -> leases.acquire(acquire("no-namespace", "runner-2", 30)));
    assertInvalid("name", () -> leases.acquire(acquire("lock/", "runner-2", 30)));
  }

  @Test
  void hugeNameIsInvalid() {
    assertInvalid(
        "name", () -> leases.acquire(acquire("lock/" + "x".repeat(100_000), "runner-2", 30)));
  }

  @Test
  void controlCharacterInNameIsInvalid() {
    assertInvalid("name", () -> leases.acquire(acquire("lock/a\u0000b", "runner-2", 30)));
  }

  @Test
  void emptyHolderIsInvalid() {
    assertInvalid("holder", () -> leases.acquire(acquire("lock/free", "", 30)));
  }

  @Test
  void zeroAndNegativeTtlAreInvalid() {
    assertInvalid("ttl", () -> leases.acquire(acquire("lock/free", "runner-2", 0)));
    assertInvalid("ttl", () -> leases.acquire(acquire("lock/free", "runner-2", -5)));
    AcquireRequest mixedSigns =
        acquire("lock/free", "runner-2", 5).toBuilder()
            .setTtl(Duration.newBuilder().setSeconds(5).setNanos(-1))
            .build();
    assertInvalid("ttl", () -> leases.acquire(mixedSigns));
    // Beyond protobuf's Duration range: in microseconds it would overflow during apply.
    assertInvalid(
        "ttl", () -> leases.acquire(acquire("lock/free", "runner-2", 10_000_000_000_000L)));
  }

  @Test
  void nonPositiveTokenIsInvalid() {
    assertInvalid("token", () -> leases.release(release("lock/held", 0)));
    assertInvalid(
        "items[0].token",
        () ->
            leases.renew(
                RenewRequest.newBuilder()
                    .addItems(RenewItem.newBuilder().setName("lock/held").setToken(-1))
                    .build()));
  }

  @Test
  void tokenThatWasNeverIssuedIsInvalid() {
    assertInvalid("token", () -> leases.release(release("lock/held", 1_000_000_000L)));
    assertInvalid(
        "token",
        () ->
            leases.update(
                UpdateRequest.newBuilder()
                    .setName("lock/held")
                    .setToken(1_000_000_000L)
                    .setAttributes(
                        io.leasehold.proto.v1.Attributes.newBuilder().setAddress("10.0.0.1:80"))
                    .build()));
    assertInvalid(
        "items[1].token",
        () ->
            leases.renew(
                RenewRequest.newBuilder()
                    .addItems(RenewItem.newBuilder().setName("lock/held").setToken(heldToken))
                    .addItems(RenewItem.newBuilder().setName("lock/held").setToken(1_000_000_000L))
                    .build()));
  }

  @Test
  void badRequestIdIsInvalid() {
    assertInvalid(
        "request_id",
        () ->
            leases.acquire(
                acquire("lock/free", "runner-2", 30).toBuilder()
                    .setRequestId("x".repeat(65))
                    .build()));
    assertInvalid(
        "request_id",
        () ->
            leases.acquire(
                acquire("lock/free", "runner-2", 30).toBuilder()
                    .setRequestId("two words")
                    .build()));
    io.leasehold.proto.v1.RegistryGrpc.RegistryBlockingStub registry =
        cluster.registry(cluster.ids().get(0));
    io.grpc.StatusRuntimeException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            io.grpc.StatusRuntimeException.class,
            () ->
                registry.register(
                    io.leasehold.proto.v1.RegisterRequest.newBuilder()
                        .setService("svc")
                        .setInstance("i1")
                        .setAddress("10.0.0.1:80")
                        .setRequestId("x".repeat(65))
                        .build()));
    assertEquals(io.grpc.Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().startsWith("request_id"), e.getStatus().getDescription());
  }

  @Test
  void emptyRenewIsInvalid() {
    assertInvalid("items", () -> leases.renew(RenewRequest.getDefaultInstance()));
  }

  @Test
  void listLimitOutOfRangeIsInvalid() {
    assertInvalid("limit", () -> leases.list(list("lock/").toBuilder().setLimit(-1).build()));
  }

  @Test
  void malformedRequestBytesAreInvalid() {
    MethodDescriptor<byte[], byte[]> raw =
        LeasesGrpc.getAcquireMethod().toBuilder(BYTES, BYTES).build();
    byte[] garbage = {(byte) 0x0a, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0x7f};
    assertInvalid(
        "request",
        () ->
            ClientCalls.blockingUnaryCall(
                cluster.channel(cluster.followers().get(0).id()),
                raw,
                CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS),
                garbage));
  }

  @Test
  void validRequestsStillWorkAfterBadOnes() {
    assertEquals(
        Outcome.CONFLICT, leases.acquire(acquire("lock/held", "runner-2", 30)).getOutcome());
    assertEquals(
        heldToken, leases.acquire(acquire("lock/held", "runner-1", 60)).getLease().getToken());
  }

  @Test
  void ttlOutsideTheBoundsIsRejectedWithTheBounds() {
    AcquireResponse r = leases.acquire(acquire("lock/short", "runner-2", 1));
    assertEquals(Outcome.REJECTED, r.getOutcome());
    assertEquals(seconds(2), r.getRejection().getMinTtl());
    assertEquals(seconds(24 * 3600), r.getRejection().getMaxTtl());
    assertEquals(
        List.of("lock/held"),
        ViewStubs.leasesNow(leases).stream().map(io.leasehold.proto.v1.Lease::getName).toList(),
        "a rejected acquire creates no lease");
  }

  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };
}
