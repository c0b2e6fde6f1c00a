package io.leasehold.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.rpc.RetryInfo;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.leasehold.proto.v1.AcquireResponse;
import io.leasehold.proto.v1.AuthGrpc;
import io.leasehold.proto.v1.GrantRoleRequest;
import io.leasehold.proto.v1.LeasesGrpc;
import io.leasehold.proto.v1.Outcome;
import io.leasehold.proto.v1.RegisterRequest;
import io.leasehold.proto.v1.RegistryGrpc;
import io.leasehold.proto.v1.RenewItem;
import io.leasehold.proto.v1.RenewRequest;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.proto.v1.WatchResponse;
import io.leasehold.server.LeaseholdNode;
import io.leasehold.server.Requests;
import io.leasehold.server.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-node limits against abuse, on a real node: each refused with its status and a message
 * naming the option.
 */
class RequestLimitsTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  @TempDir Path dir;
  TestCluster cluster;
  final List<ManagedChannel> channels = new ArrayList<>();

  @AfterEach
  void stop() {
    channels.forEach(ManagedChannel::shutdownNow);
    if (cluster != null) {
      cluster.close();
    }
  }

  private LeaseholdNode start(UnaryOperator<io.leasehold.server.NodeConfig.Builder> tweak)
      throws Exception {
    cluster = TestCluster.start(1, dir.resolve("data"), tweak);
    return cluster.node("n1");
  }

  private ManagedChannel channel(LeaseholdNode node, ClientInterceptor... interceptors) {
    ManagedChannel c =
        NettyChannelBuilder.forTarget(node.clientAddress())
            .usePlaintext()
            .intercept(interceptors)
            .build();
    channels.add(c);
    return c;
  }

  private static StatusRuntimeException refusal(Runnable call) {
    return assertThrows(StatusRuntimeException.class, call::run);
  }

  @Test
  void acquisitionsPerAddressAreLimitedAndTheBucketRefills() throws Exception {
    LeaseholdNode node = start(b -> b.maxAcquiresPerSecond(5));
    LeasesGrpc.LeasesBlockingStub leases =
        LeasesGrpc.newBlockingStub(channel(node)).withDeadlineAfter(20, TimeUnit.SECONDS);
    // Without authentication the bucket is the remote address's: ask until it is empty.
    StatusRuntimeException refused = null;
    int granted = 0;
    long started = System.nanoTime();
    for (int i = 0; i < 200 && refused == null; i++) {
      try {
        assertEquals(
            Outcome.GRANTED, leases.acquire(Requests.acquire("rate/" + i, "h", 30)).getOutcome());
        granted++;
      } catch (StatusRuntimeException e) {
        refused = e;
      }
    }
    assertNotNull(refused, "200 acquisitions at once passed a limit of 5 a second");
    double seconds = (System.nanoTime() - started) / 1e9;
    assertTrue(
        granted >= 5 && granted <= 5 + 5 * seconds + 1, granted + " granted in " + seconds + " s");
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getStatus().getCode());
    String message = refused.getStatus().getDescription();
    assertTrue(
        message.contains("--max-acquires-per-second")
            && message.contains("5 a second")
            && message.contains("address 127.0.0.1")
            && message.contains("retry in"),
        message);
    RetryInfo retry = StatusProto.fromThrowable(refused).getDetails(0).unpack(RetryInfo.class);
    assertTrue(
        retry.getRetryDelay().getNanos() > 0 || retry.getRetryDelay().getSeconds() > 0,
        retry.toString());

    // Register draws on the same bucket, from another connection of the same address.
    RegistryGrpc.RegistryBlockingStub registry =
        RegistryGrpc.newBlockingStub(channel(node)).withDeadlineAfter(20, TimeUnit.SECONDS);
    StatusRuntimeException registerRefused =
        refusal(
            () -> {
              for (int i = 0; i < 200; i++) {
                registry.register(
                    RegisterRequest.newBuilder()
                        .setService("svc")
                        .setInstance("i" + i)
                        .setAddress("10.0.0.1:80")
                        .build());
              }
            });
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, registerRefused.getStatus().getCode());

    // The bucket refills: an acquisition passes again within a second or so.
    TestCluster.await(
        "an acquisition passes again",
        WAIT,
        () -> {
          try {
            return leases.acquire(Requests.acquire("rate/again", "h", 30)).getOutcome()
                == Outcome.GRANTED;
          } catch (StatusRuntimeException e) {
            return false;
          }
        });
  }

  @Test
  void anAcquireManyTakesOneAcquisitionANameAndOneTooLargeIsRefusedWithItsSize() throws Exception {
    LeaseholdNode node = start(b -> b.maxAcquiresPerSecond(10));
    LeasesGrpc.LeasesBlockingStub leases =
        LeasesGrpc.newBlockingStub(channel(node)).withDeadlineAfter(20, TimeUnit.SECONDS);
    StatusRuntimeException tooLarge =
        assertThrows(StatusRuntimeException.class, () -> leases.acquireMany(many("big/", 11)));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, tooLarge.getStatus().getCode());
    assertTrue(
        tooLarge.getStatus().getDescription().contains("AcquireMany of 11 names")
            && tooLarge.getStatus().getDescription().contains("--max-acquires-per-second"),
        tooLarge.getStatus().getDescription());

    // Two calls of ten names sent together: the first empties the bucket of ten, the second
    // would need a second's refill.
    LeasesGrpc.LeasesFutureStub async =
        LeasesGrpc.newFutureStub(channel(node)).withDeadlineAfter(20, TimeUnit.SECONDS);
    var first = async.acquireMany(many("a/", 10));
    var second = async.acquireMany(many("b/", 10));
    int granted = 0;
    StatusRuntimeException refused = null;
    for (var call : List.of(first, second)) {
      try {
        granted += call.get(20, TimeUnit.SECONDS).getGranted();
      } catch (java.util.concurrent.ExecutionException e) {
        refused = (StatusRuntimeException) e.getCause();
      }
    }
    assertEquals(10, granted, "one call of ten passed");
    assertNotNull(refused, "twenty names at once passed a limit of ten a second");
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getStatus().getCode());
    assertTrue(
        refused.getStatus().getDescription().contains("AcquireMany names"),
        refused.getStatus().getDescription());
  }

  private static io.leasehold.proto.v1.AcquireManyRequest many(String prefix, int n) {
    io.leasehold.proto.v1.AcquireManyRequest.Builder b =
        io.leasehold.proto.v1.AcquireManyRequest.newBuilder()
            .setHolder("h")
            .setTtl(Requests.seconds(30));
    for (int i = 0; i < n; i++) {
      b.addItems(io.leasehold.proto.v1.AcquireManyItem.newBuilder().setName(prefix + i));
    }
    return b.build();
  }

  @Test
  void acquisitionsAreCountedPerIdentityWhenAuthenticated() throws Exception {
    Path tokens = dir.resolve("tokens.csv");
    Files.writeString(tokens, "alice-token-0123456789,alice\nbob-token-0123456789ab,bob\n");
    LeaseholdNode node = start(b -> b.authTokenFile(tokens).maxAcquiresPerSecond(3));
    ManagedChannel alice = channel(node, bearer("alice-token-0123456789"));
    ManagedChannel bob = channel(node, bearer("bob-token-0123456789ab"));
    // alice is the initial admin; she grants bob the client role.
    TestCluster.await(
        "bob is granted the client role",
        WAIT,
        () -> {
          try {
            AuthGrpc.newBlockingStub(alice)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .grantRole(
                    GrantRoleRequest.newBuilder().setIdentity("bob").setRole("client").build());
            return true;
          } catch (StatusRuntimeException e) {
            return false;
          }
        });
    LeasesGrpc.LeasesBlockingStub aliceLeases =
        LeasesGrpc.newBlockingStub(alice).withDeadlineAfter(20, TimeUnit.SECONDS);
    StatusRuntimeException refused =
        refusal(
            () -> {
              for (int i = 0; i < 200; i++) {
                aliceLeases.acquire(Requests.acquire("alice/" + i, "alice", 30));
              }
            });
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getStatus().getCode());
    assertTrue(
        refused.getStatus().getDescription().contains("identity alice"),
        refused.getStatus().getDescription());
    // bob connects from the same address but is another identity, with a bucket of his own.
    AcquireResponse r =
        LeasesGrpc.newBlockingStub(bob)
            .withDeadlineAfter(20, TimeUnit.SECONDS)
            .acquire(Requests.acquire("bob/1", "bob", 30));
    assertEquals(Outcome.GRANTED, r.getOutcome());
  }

  @Test
  void watchesPerConnectionAndPerIdentityAreLimitedAndFreedHoweverTheyEnd() throws Exception {
    LeaseholdNode node = start(b -> b.maxWatchesPerConnection(2).maxWatchesPerIdentity(3));
    RequestLimits limits = node.requestLimits();
    ManagedChannel a = channel(node);
    ManagedChannel b = channel(node);
    Watch a1 = Watch.open(a);
    Watch a2 = Watch.open(a);
    TestCluster.await("two watches open", WAIT, () -> limits.openWatches() == 2);
    Status perConnection = Watch.open(a).refusal();
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, perConnection.getCode());
    assertTrue(
        perConnection.getDescription().contains("--max-watches-per-connection"),
        perConnection.getDescription());

    Watch b1 = Watch.open(b);
    TestCluster.await("three watches open", WAIT, () -> limits.openWatches() == 3);
    Status perIdentity = Watch.open(b).refusal();
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, perIdentity.getCode());
    assertTrue(
        perIdentity.getDescription().contains("--max-watches-per-identity")
            && perIdentity.getDescription().contains("address 127.0.0.1"),
        perIdentity.getDescription());

    // A cancelled watch frees its slot, for its connection and its identity.
    a1.cancel();
    TestCluster.await("the cancelled watch's slot is free", WAIT, () -> limits.openWatches() == 2);
    Watch b2 = Watch.open(b);
    TestCluster.await("a watch takes the freed slot", WAIT, () -> limits.openWatches() == 3);
    assertTrue(b1.alive() && b2.alive() && a2.alive());

    // A dropped connection frees every slot it held.
    a.shutdownNow();
    b.shutdownNow();
    TestCluster.await(
        "the dropped connections' slots are free", WAIT, () -> limits.openWatches() == 0);
    ManagedChannel c = channel(node);
    Watch.open(c);
    Watch.open(c);
    TestCluster.await("new watches open", WAIT, () -> limits.openWatches() == 2);
  }

  @Test
  void renewItemsAreCappedPerNode() throws Exception {
    LeaseholdNode node = start(b -> b.maxRenewItems(3));
    LeasesGrpc.LeasesBlockingStub leases =
        LeasesGrpc.newBlockingStub(channel(node)).withDeadlineAfter(20, TimeUnit.SECONDS);
    long token = leases.acquire(Requests.acquire("renew/a", "h", 30)).getLease().getToken();
    RenewRequest.Builder three = RenewRequest.newBuilder();
    for (int i = 0; i < 3; i++) {
      three.addItems(RenewItem.newBuilder().setName("renew/a").setToken(token));
    }
    assertEquals(3, leases.renew(three.build()).getResultsCount());
    StatusRuntimeException refused =
        refusal(
            () -> leases.renew(three.addItems(RenewItem.newBuilder().setName("renew/b")).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, refused.getStatus().getCode());
    String message = refused.getStatus().getDescription();
    assertTrue(
        message.startsWith("items: at most 3")
            && message.contains("--max-renew-items")
            && message.contains("got 4"),
        message);
  }

  @Test
  void requestAndMetadataSizeAreGrpcsLimits() throws Exception {
    LeaseholdNode node = start(b -> b.maxRequestBytes(1 << 20).maxMetadataBytes(2048));
    LeasesGrpc.LeasesBlockingStub leases =
        LeasesGrpc.newBlockingStub(channel(node)).withDeadlineAfter(20, TimeUnit.SECONDS);
    RenewRequest.Builder big = RenewRequest.newBuilder();
    String name = "big/" + "x".repeat(500);
    for (int i = 0; i < 2500; i++) {
      big.addItems(RenewItem.newBuilder().setName(name).setToken(i));
    }
    assertTrue(big.build().getSerializedSize() > 1 << 20);
    StatusRuntimeException tooBig = refusal(() -> leases.renew(big.build()));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, tooBig.getStatus().getCode(), tooBig.toString());
    assertTrue(
        tooBig.getStatus().getDescription().contains(Integer.toString(1 << 20)),
        tooBig.getStatus().getDescription());

    Metadata.Key<String> key = Metadata.Key.of("x-padding", Metadata.ASCII_STRING_MARSHALLER);
    ClientInterceptor padding = header(key, "p".repeat(4096));
    StatusRuntimeException bigHeaders =
        refusal(
            () ->
                LeasesGrpc.newBlockingStub(channel(node, padding))
                    .withDeadlineAfter(20, TimeUnit.SECONDS)
                    .acquire(Requests.acquire("meta/a", "h", 30)));
    // The node advertises the limit (HTTP/2 SETTINGS_MAX_HEADER_LIST_SIZE), so grpc-java's client
    // refuses to send such headers itself: INTERNAL, caused by Netty's header list size error.
    assertEquals(Status.Code.INTERNAL, bigHeaders.getStatus().getCode(), bigHeaders.toString());
    assertTrue(
        String.valueOf(bigHeaders.getCause())
            .contains("Header size exceeded max allowed size (2048)"),
        String.valueOf(bigHeaders.getCause()));

    // Requests within both limits pass.
    assertEquals(Outcome.GRANTED, leases.acquire(Requests.acquire("meta/b", "h", 30)).getOutcome());
  }

  @Test
  void countsRenewItemsWithoutParsingThem() {
    RenewRequest r =
        RenewRequest.newBuilder()
            .addItems(RenewItem.newBuilder().setName("a").setToken(1))
            .addItems(RenewItem.newBuilder().setName("b"))
            .build();
    assertEquals(2, RequestLimits.countItems(r.toByteArray(), RenewRequest.ITEMS_FIELD_NUMBER));
    assertEquals(0, RequestLimits.countItems(new byte[0], RenewRequest.ITEMS_FIELD_NUMBER));
  }

  private static ClientInterceptor bearer(String token) {
    return header(
        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
  }

  private static ClientInterceptor header(Metadata.Key<String> key, String value) {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(
            next.newCall(method, options)) {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            headers.put(key, value);
            super.start(listener, headers);
          }
        };
      }
    };
  }

  /** One Watch stream of every lease, from now on. */
  private static final class Watch implements ClientResponseObserver<WatchRequest, WatchResponse> {
    private final CompletableFuture<Status> ended = new CompletableFuture<>();
    private volatile ClientCallStreamObserver<WatchRequest> call;

    static Watch open(Channel channel) {
      Watch w = new Watch();
      LeasesGrpc.newStub(channel).watch(WatchRequest.getDefaultInstance(), w);
      return w;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
      this.call = requestStream;
    }

    @Override
    public void onNext(WatchResponse value) {}

    @Override
    public void onError(Throwable t) {
      ended.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      ended.complete(Status.OK);
    }

    Status refusal() throws Exception {
      return ended.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    boolean alive() {
      return !ended.isDone();
    }

    void cancel() {
      call.cancel("test cancels", null);
    }
  }
}
