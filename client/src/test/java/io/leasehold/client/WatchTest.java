package io.leasehold.client;

import static io.leasehold.client.Fixtures.ttl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.leasehold.server.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The watch primitive: history then live, resumed on another node with no gap and no duplicate. */
class WatchTest {
  @TempDir Path dir;
  TestCluster cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Records events as (revision, type, name, token), and the highest complete revision. */
  static final class Recorder implements WatchListener {
    final List<String> events = new CopyOnWriteArrayList<>();
    volatile long progress;
    final CompletableFuture<LeaseholdException> error = new CompletableFuture<>();

    @Override
    public void onEvent(WatchEvent e) {
      events.add(
          e.revision() + " " + e.type() + " " + e.name() + " " + e.lease().orElseThrow().token());
    }

    @Override
    public void onProgress(long revision) {
      progress = revision;
    }

    @Override
    public void onError(LeaseholdException e) {
      error.complete(e);
    }
  }

  private static long work(LeaseholdClient client, String prefix, int from, int to)
      throws Exception {
    for (int i = from; i < to; i++) {
      Lease l =
          client.blocking().acquire(prefix + (i % 7), ttl(30).withAddress("10.0.0." + i + ":80"));
      if (i % 3 == 0) {
        l.update(AttributeUpdate.status("DRAINING")).get();
      }
      l.release().get();
    }
    return client.blocking().list(prefix).revision();
  }

  @Test
  void aWatchResumesOnAnotherNodeAfterItsNodeDiesWithNoGapAndNoDuplicate() throws Exception {
    cluster = Fixtures.stableThreeNodes(dir);
    String doomed = cluster.followers().get(0).id();
    String survivor = cluster.followers().get(1).id();
    try (LeaseholdClient watcher = Fixtures.client(Fixtures.endpoints(cluster, doomed), b -> b);
        LeaseholdClient reference = Fixtures.client(Fixtures.endpoints(cluster, survivor), b -> b);
        LeaseholdClient writer = Fixtures.client(Fixtures.endpoints(cluster, survivor), b -> b)) {
      Recorder moved = new Recorder();
      Recorder stayed = new Recorder();
      Watch w1 = watcher.watch("w/", 1, moved);
      Watch w2 = reference.watch("w/", 1, stayed);
      long middle = work(writer, "w/", 0, 20);
      Fixtures.await(
          "the watch reached the middle", Duration.ofSeconds(20), () -> w1.revision() >= middle);
      cluster.stopNode(doomed);
      long end = work(writer, "w/", 20, 40);
      Fixtures.await(
          "both watches reached the end",
          Duration.ofSeconds(30),
          () -> w1.revision() >= end && w2.revision() >= end);
      assertEquals(
          2 * 40 + 14, stayed.events.size(), "acquired, released, and updated every third time");
      assertEquals(
          stayed.events,
          moved.events,
          "the resumed watch saw exactly the events the other one saw");
      assertFalse(w1.isClosed());
      w1.close();
      w2.close();
      assertTrue(w1.isClosed());
    }
  }

  /**
   * The SDK lists lz4-block among the encodings it accepts, so a node compresses its Watch streams
   * (messages of 512 bytes or more; a history read here is one such message).
   */
  @Test
  void theSdkAcceptsLz4BlockSoItsWatchStreamsComeCompressed() throws Exception {
    cluster = TestCluster.start(1, dir);
    Set<String> encodings = ConcurrentHashMap.newKeySet();
    Metadata.Key<String> encoding =
        Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER);
    ClientInterceptor headers =
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(
                next.newCall(method, options)) {
              @Override
              public void start(Listener<R> listener, Metadata h) {
                super.start(
                    new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(
                        listener) {
                      @Override
                      public void onHeaders(Metadata received) {
                        if (method.getBareMethodName().equals("Watch")) {
                          encodings.add(String.valueOf(received.get(encoding)));
                        }
                        super.onHeaders(received);
                      }
                    },
                    h);
              }
            };
          }
        };
    try (LeaseholdClient client = Fixtures.client(cluster, b -> b.interceptor(headers))) {
      long end = work(client, "z/", 0, 60);
      Recorder r = new Recorder();
      Watch w = client.watch("z/", 1, r);
      Fixtures.await("caught up", Duration.ofSeconds(20), () -> w.revision() >= end);
      assertEquals(
          2 * 60 + 20, r.events.size(), "acquired, released, and updated every third time");
      assertEquals(Set.of("lz4-block"), encodings, "the node chose lz4-block for the SDK's Watch");
      assertFalse(r.error.isDone());
      w.close();
    }
  }

  /**
   * A call an interceptor cancelled before it started cannot be started (gRPC throws, and no close
   * follows): the watch counts it as a failed stream and opens another.
   */
  @Test
  void aWatchWhoseStreamWasCancelledBeforeItStartedOpensAnother() throws Exception {
    cluster = TestCluster.start(1, dir);
    AtomicInteger watchCalls = new AtomicInteger();
    ClientInterceptor cancelTheFirstWatchBeforeItStarts =
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            ClientCall<Q, R> call = next.newCall(method, options);
            if (!method.getBareMethodName().equals("Watch") || watchCalls.getAndIncrement() > 0) {
              return call;
            }
            return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
              @Override
              public void start(Listener<R> listener, Metadata headers) {
                delegate().cancel("cut off before it started", null);
                super.start(listener, headers);
              }
            };
          }
        };
    try (LeaseholdClient client =
        Fixtures.client(cluster, b -> b.interceptor(cancelTheFirstWatchBeforeItStarts))) {
      long end = work(client, "s/", 0, 3);
      Recorder r = new Recorder();
      Watch w = client.watch("s/", 1, r);
      Fixtures.await(
          () ->
              "the watch caught up on another stream; at "
                  + w.revision()
                  + " of "
                  + end
                  + " after "
                  + watchCalls.get()
                  + " Watch calls",
          Duration.ofSeconds(20),
          () -> w.revision() >= end);
      assertTrue(watchCalls.get() >= 2, "the cancelled call, then one that streamed");
      assertEquals(2 * 3 + 1, r.events.size(), "acquired, released, and updated every third time");
      assertFalse(r.error.isDone());
      assertFalse(w.isClosed());
      w.close();
    }
  }

  @Test
  void aWatchFromACompactedRevisionEndsWithTheCompactionRevision() throws Exception {
    cluster = TestCluster.start(1, dir, b -> b.history(20, Duration.ofHours(1)));
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      work(client, "c/", 0, 30);
      Fixtures.await(
          "the history was compacted",
          Duration.ofSeconds(20),
          () -> cluster.running().get(0).stateMachine().core().history().getCompactRevision() > 1);
      Recorder r = new Recorder();
      Watch w = client.watch("c/", 1, r);
      LeaseholdException e = r.error.get(20, TimeUnit.SECONDS);
      assertTrue(e instanceof WatchCompactedException, e.toString());
      assertTrue(((WatchCompactedException) e).compactRevision() > 1);
      assertTrue(w.isClosed());

      // Listing and watching from the listing's revision + 1 is the way back.
      LeaseListing listing = client.blocking().list("c/");
      Recorder fresh = new Recorder();
      Watch again = client.watch("c/", listing.revision() + 1, fresh);
      long end = work(client, "c/", 30, 31);
      Fixtures.await(
          "the new watch follows", Duration.ofSeconds(10), () -> again.revision() >= end);
      assertEquals(3, fresh.events.size(), "acquired, updated, released");
      assertFalse(fresh.error.isDone());
      again.close();
    }
  }

  @Test
  void aWatchFromNowStartsAtTheCurrentRevisionAndFiltersByType() throws Exception {
    cluster = TestCluster.start(1, dir);
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      work(client, "n/", 0, 3);
      Recorder r = new Recorder();
      Watch w = client.watch(WatchOptions.of("n/").withTypes(Set.of(EventType.RELEASED)), r);
      Fixtures.await("positioned", Duration.ofSeconds(10), () -> w.revision() > 0);
      assertEquals(List.of(), r.events, "nothing from before it started");
      long end = work(client, "n/", 3, 5);
      Fixtures.await("caught up", Duration.ofSeconds(10), () -> w.revision() >= end);
      List<String> types = new ArrayList<>();
      r.events.forEach(e -> types.add(e.split(" ")[1]));
      assertEquals(List.of("RELEASED", "RELEASED"), types);
      w.close();
    }
  }

  @Test
  void aBasicViewWatchGetsEveryEventWithItsHolderTokenAndAttributesButNoTimes() throws Exception {
    cluster = TestCluster.start(1, dir);
    try (LeaseholdClient client = Fixtures.client(cluster)) {
      work(
          client, "other/", 0,
          1); // a revision to start from: a watch from now is positioned once it reports one
      List<WatchEvent> full = new CopyOnWriteArrayList<>();
      List<WatchEvent> basic = new CopyOnWriteArrayList<>();
      Watch f = client.watch(WatchOptions.of("b/"), (WatchListener) full::add);
      Watch b =
          client.watch(WatchOptions.of("b/").withView(WatchView.BASIC), (WatchListener) basic::add);
      Fixtures.await(
          "positioned", Duration.ofSeconds(10), () -> f.revision() > 0 && b.revision() > 0);
      long end = work(client, "b/", 0, 6);
      Fixtures.await(
          "caught up", Duration.ofSeconds(10), () -> f.revision() >= end && b.revision() >= end);
      assertEquals(2 * 6 + 2, full.size(), "acquired, released, and updated every third time");
      assertEquals(full.size(), basic.size());
      for (int i = 0; i < full.size(); i++) {
        WatchEvent x = full.get(i);
        WatchEvent y = basic.get(i);
        LeaseInfo lx = x.lease().orElseThrow();
        LeaseInfo ly = y.lease().orElseThrow();
        assertEquals(
            List.of(x.type(), x.revision(), x.name(), x.reason(), x.message()),
            List.of(y.type(), y.revision(), y.name(), y.reason(), y.message()));
        assertEquals(
            List.of(lx.name(), lx.holder(), lx.token(), lx.attributes()),
            List.of(ly.name(), ly.holder(), ly.token(), ly.attributes()),
            "the lease's name is the event's; holder, token and attributes are sent");
        assertTrue(lx.attributes().address().isPresent());
        assertTrue(x.time().isAfter(Instant.EPOCH) && lx.ttl().equals(Duration.ofSeconds(30)));
        assertEquals(
            List.of(Instant.EPOCH, Instant.EPOCH, Duration.ZERO),
            List.of(y.time(), ly.acquiredAt(), ly.ttl()),
            "the basic view sends no times");
      }
      assertThrows(
          IllegalArgumentException.class,
          () -> WatchOptions.of("b/").withTypes(Set.of(EventType.UNKNOWN)));
      f.close();
      b.close();
    }
  }
}
