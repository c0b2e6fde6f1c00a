package io.leasehold.server.watch;

import static io.leasehold.server.Requests.acquire;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientStreamTracer;
import io.grpc.DecompressorRegistry;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.leasehold.proto.Lz4BlockCodec;
import io.leasehold.proto.v1.EventView;
import io.leasehold.proto.v1.WatchRequest;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Watch streams in lz4-block for clients that accept it, plain for the others: the same events
 * either way, fewer bytes on the wire for the first, and small messages left uncompressed.
 */
class WatchCompressionTest {
  private static final Metadata.Key<String> ENCODING =
      Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER);

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

  /**
   * What a channel's calls received: the encodings the node chose, the bytes on the wire and
   * inflated.
   */
  static final class Wire implements ClientInterceptor {
    final Set<String> encodings = ConcurrentHashMap.newKeySet();
    final AtomicLong wireBytes = new AtomicLong();
    final AtomicLong messageBytes = new AtomicLong();

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      ClientStreamTracer.Factory tracer =
          new ClientStreamTracer.Factory() {
            @Override
            public ClientStreamTracer newClientStreamTracer(
                ClientStreamTracer.StreamInfo info, Metadata headers) {
              return new ClientStreamTracer() {
                @Override
                public void inboundWireSize(long bytes) {
                  wireBytes.addAndGet(bytes);
                }

                @Override
                public void inboundUncompressedSize(long bytes) {
                  messageBytes.addAndGet(bytes);
                }
              };
            }
          };
      return new ForwardingClientCall.SimpleForwardingClientCall<>(
          next.newCall(method, options.withStreamTracerFactory(tracer))) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          super.start(
              new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                @Override
                public void onHeaders(Metadata h) {
                  encodings.add(String.valueOf(h.get(ENCODING)));
                  super.onHeaders(h);
                }
              },
              headers);
        }
      };
    }
  }

  private ManagedChannel channel(boolean acceptLz4, Wire wire) {
    ManagedChannel ch =
        ManagedChannelBuilder.forTarget(cluster.node("n1").clientAddress())
            .usePlaintext()
            .decompressorRegistry(
                acceptLz4
                    ? Lz4BlockCodec.decompressors()
                    : DecompressorRegistry.getDefaultInstance())
            .intercept(wire)
            .build();
    channels.add(ch);
    return ch;
  }

  private static List<String> summary(WatchRecorder w) {
    return w.events().stream()
        .map(
            e ->
                e.getRevision()
                    + " "
                    + e.getType()
                    + " "
                    + e.getName()
                    + " "
                    + e.getLease().getHolder()
                    + " "
                    + e.getLease().getToken()
                    + " "
                    + e.getLease().getAttributes().getAddress()
                    + " "
                    + e.getLease().hasAcquiredAt())
        .toList();
  }

  @Test
  void aClientThatAcceptsLz4GetsTheSameEventsInUnderHalfTheBytesAndSmallMessagesStayPlain()
      throws Exception {
    cluster = TestCluster.start(1, dir);
    long first = 0;
    for (int i = 0; i < 300; i++) {
      long revision =
          cluster
              .leases("n1")
              .acquire(
                  acquire("svc/c-" + i, "runner-" + (i % 5), 120).toBuilder()
                      .setAttributes(
                          io.leasehold.proto.v1.Attributes.newBuilder()
                              .setAddress("10.0." + (i % 7) + ".1:8080"))
                      .build())
              .getRevision();
      first = first == 0 ? revision : first;
    }
    Wire lz4 = new Wire();
    Wire plain = new Wire();
    ManagedChannel lz4Channel = channel(true, lz4);
    ManagedChannel plainChannel = channel(false, plain);
    WatchRequest full = WatchRequest.newBuilder().setPrefix("svc/").setStartRevision(first).build();
    WatchRequest basic = full.toBuilder().setView(EventView.EVENT_VIEW_BASIC).build();
    // From history: the first messages hold hundreds of events. Two lz4 watchers and one plain
    // watcher per view, so that compressed and plain streams share their groups' messages.
    List<WatchRecorder> lz4Full =
        List.of(WatchRecorder.watch(lz4Channel, full), WatchRecorder.watch(lz4Channel, full));
    List<WatchRecorder> lz4Basic =
        List.of(WatchRecorder.watch(lz4Channel, basic), WatchRecorder.watch(lz4Channel, basic));
    WatchRecorder plainFull = WatchRecorder.watch(plainChannel, full);
    WatchRecorder plainBasic = WatchRecorder.watch(plainChannel, basic);
    List<WatchRecorder> all = new ArrayList<>(lz4Full);
    all.addAll(lz4Basic);
    all.add(plainFull);
    all.add(plainBasic);
    long historyEnd =
        cluster.leases("n1").acquire(acquire("svc/c-last", "runner-0", 120)).getRevision();
    all.forEach(w -> w.awaitRevision(historyEnd));

    assertEquals(
        Set.of(Lz4BlockCodec.ENCODING),
        lz4.encodings,
        "the node compresses for a client that accepts lz4-block");
    assertEquals(Set.of("identity"), plain.encodings, "and not for one that does not");
    assertEquals(
        plain.messageBytes.get(),
        plain.wireBytes.get(),
        "plain streams: the wire carries the messages as they are");
    long lz4Wire = lz4.wireBytes.get();
    long lz4Messages = lz4.messageBytes.get();
    assertTrue(
        lz4Messages > 2 * plain.messageBytes.get() * 0.9,
        "the lz4 channel's four streams inflated as much as the plain two: "
            + lz4Messages
            + " against "
            + plain.messageBytes.get());
    // 2.75:1 when written (the full view's times compress less than names and holders).
    assertTrue(
        lz4Wire * 2 < lz4Messages,
        "lz4-block streams carry under half the bytes: " + lz4Wire + " of " + lz4Messages);

    // Live, one acquisition at a time: messages of one event, too small to be worth compressing.
    long last = 0;
    for (int i = 0; i < 20; i++) {
      last = cluster.leases("n1").acquire(acquire("svc/live-" + i, "runner-1", 120)).getRevision();
      long revision = last;
      all.forEach(w -> w.awaitRevision(revision));
    }
    assertEquals(
        lz4.messageBytes.get() - lz4Messages,
        lz4.wireBytes.get() - lz4Wire,
        "messages under "
            + Watcher.COMPRESS_FROM_BYTES
            + " bytes go uncompressed on a compressing stream");

    List<String> expectedFull = summary(plainFull);
    List<String> expectedBasic = summary(plainBasic);
    assertEquals(
        321, expectedFull.size(), "300 from history, the last, and 20 live; in " + expectedFull);
    assertTrue(
        expectedFull.stream().allMatch(s -> s.endsWith(" true"))
            && expectedBasic.stream().allMatch(s -> s.endsWith(" false")),
        "each view stays its own");
    for (WatchRecorder w : lz4Full) {
      assertEquals(
          expectedFull,
          summary(w),
          "a compressed full-view stream carries exactly the plain one's events");
      assertEquals(0, w.afterTheirClaim());
    }
    for (WatchRecorder w : lz4Basic) {
      assertEquals(
          expectedBasic,
          summary(w),
          "a compressed basic-view stream carries exactly the plain one's events");
      assertEquals(0, w.afterTheirClaim());
    }
    assertEquals(
        2,
        cluster.node("n1").watchHub().watchGroups(),
        "two groups, one per view, across both kinds of stream");
    assertEquals(
        List.of(),
        lz4Full.stream().map(WatchRecorder::status).filter(java.util.Objects::nonNull).toList());
  }
}
